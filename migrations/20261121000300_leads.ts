import type { Knex } from 'knex';
import { createResourceTable } from '../src/db/tables.js';

export async function up(knex: Knex): Promise<void> {
  await createResourceTable(knex, 'leads', { filters: ['status'] }, (t) => {
    t.string('name', 200).notNullable();
    t.string('email', 254).nullable();
    t.string('company', 200).nullable();
    t.string('source', 100).nullable();
    t.integer('score').nullable();
    t.string('status', 16).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('leads');
}
