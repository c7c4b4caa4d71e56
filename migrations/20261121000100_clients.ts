import type { Knex } from 'knex';
import { createResourceTable } from '../src/db/tables.js';

export async function up(knex: Knex): Promise<void> {
  await createResourceTable(knex, 'clients', {}, (t) => {
    t.string('name', 200).notNullable();
    t.string('email', 254).nullable();
    t.string('phone', 40).nullable();
    t.string('company', 200).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('clients');
}
