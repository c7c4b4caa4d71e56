import type { Knex } from 'knex';
import { createResourceTable, money } from '../src/db/tables.js';

export async function up(knex: Knex): Promise<void> {
  await createResourceTable(knex, 'proposals', { filters: ['status', 'deal_id', 'client_id'] }, (t) => {
    t.string('title', 200).notNullable();
    t.string('deal_id', 64).nullable();
    t.string('client_id', 64).nullable();
    money(t);
    t.string('status', 16).notNullable();
    t.bigInteger('sent_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('proposals');
}
