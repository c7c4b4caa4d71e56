import type { Knex } from 'knex';
import { createResourceTable, money } from '../src/db/tables.js';

export async function up(knex: Knex): Promise<void> {
  await createResourceTable(knex, 'invoices', { filters: ['status', 'client_id', 'proposal_id'] }, (t) => {
    t.string('number', 64).notNullable();
    t.string('client_id', 64).nullable();
    t.string('proposal_id', 64).nullable();
    money(t);
    t.string('status', 16).notNullable();
    t.string('due_date', 10).nullable();
    t.bigInteger('paid_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('invoices');
}
