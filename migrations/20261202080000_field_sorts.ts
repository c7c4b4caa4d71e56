/**
 * Written by `npm run migrate:make` at 2026-12-02T07:36:07.134Z from the plugins' declarations, when lists came to sort by fields (their keyset indexes):
 *   add to deals: index deals_by_amount, index deals_by_expected_close_date (plugins/deals.ts)
 *   add to invoices: index invoices_by_amount, index invoices_by_due_date, index invoices_by_paid_at (plugins/invoices.ts)
 *   add to leads: index leads_by_score (plugins/leads.ts)
 *   add to proposals: index proposals_by_amount, index proposals_by_sent_at (plugins/proposals.ts)
 * Read it, then commit it beside the plugins. `npm run migrate -- rollback` undoes it.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deals', (t) => {
    t.index(['workspace_id', 'amount', 'id'], 'deals_by_amount');
    t.index(['workspace_id', 'expected_close_date', 'id'], 'deals_by_expected_close_date');
  });
  await knex.schema.alterTable('invoices', (t) => {
    t.index(['workspace_id', 'amount', 'id'], 'invoices_by_amount');
    t.index(['workspace_id', 'due_date', 'id'], 'invoices_by_due_date');
    t.index(['workspace_id', 'paid_at', 'id'], 'invoices_by_paid_at');
  });
  await knex.schema.alterTable('leads', (t) => {
    t.index(['workspace_id', 'score', 'id'], 'leads_by_score');
  });
  await knex.schema.alterTable('proposals', (t) => {
    t.index(['workspace_id', 'amount', 'id'], 'proposals_by_amount');
    t.index(['workspace_id', 'sent_at', 'id'], 'proposals_by_sent_at');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('proposals', (t) => {
    t.dropIndex(['workspace_id', 'amount', 'id'], 'proposals_by_amount');
    t.dropIndex(['workspace_id', 'sent_at', 'id'], 'proposals_by_sent_at');
  });
  await knex.schema.alterTable('leads', (t) => {
    t.dropIndex(['workspace_id', 'score', 'id'], 'leads_by_score');
  });
  await knex.schema.alterTable('invoices', (t) => {
    t.dropIndex(['workspace_id', 'amount', 'id'], 'invoices_by_amount');
    t.dropIndex(['workspace_id', 'due_date', 'id'], 'invoices_by_due_date');
    t.dropIndex(['workspace_id', 'paid_at', 'id'], 'invoices_by_paid_at');
  });
  await knex.schema.alterTable('deals', (t) => {
    t.dropIndex(['workspace_id', 'amount', 'id'], 'deals_by_amount');
    t.dropIndex(['workspace_id', 'expected_close_date', 'id'], 'deals_by_expected_close_date');
  });
}
