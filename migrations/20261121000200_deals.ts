import type { Knex } from 'knex';
import { createResourceTable, money } from '../src/db/tables.js';

export async function up(knex: Knex): Promise<void> {
  await createResourceTable(knex, 'deals', { filters: ['stage', 'client_id'] }, (t) => {
    t.string('title', 200).notNullable();
    money(t);
    t.string('stage', 16).notNullable();
    t.string('client_id', 64).nullable();
    t.string('expected_close_date', 10).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('deals');
}
