// The first form's own migration, as its author wrote it (kept as written: see tickets.ts).
import type { Knex } from 'knex';
import { createResourceTable } from '../../../src/db/tables.js';

export async function up(knex: Knex): Promise<void> {
  await createResourceTable(knex, 'tickets', { filters: ['client_id'] }, (t) => {
    t.string('title', 300).notNullable();
    t.string('client_id', 64).nullable();
    t.boolean('urgent').notNullable().defaultTo(false);
  });
}
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('tickets');
}
