/**
 * Written by `npm run migrate:make` at 2026-12-02T03:46:54.442Z from the plugins' declarations:
 *   create table visits (14 columns, 4 indexes) (plugins/visits.ts)
 * Read it, then commit it beside the plugins. `npm run migrate -- rollback` undoes it.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // Emails compare without regard to letter case, by their lower case: PostgreSQL and SQLite
  // index lower(column); MySQL indexes the column, under a collation that ignores case.
  const mysql = knex.client.config.client === 'mysql2';
  const caseless = (column: Knex.ColumnBuilder) => (mysql ? column.collate('utf8mb4_general_ci') : column);
  await knex.schema.createTable('visits', (t) => {
    t.string('id', 64).primary();
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.text('subject', 'text').notNullable();
    caseless(t.string('contact', 254)).nullable();
    t.integer('attendees').nullable();
    t.bigInteger('amount').nullable();
    t.string('currency', 3).nullable();
    t.bigInteger('at').nullable();
    t.boolean('confirmed').notNullable();
    t.string('status', 16).notNullable();
    t.string('client_id', 64).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.integer('version').notNullable().defaultTo(1);
    t.index(['workspace_id', 'created_at', 'id'], 'visits_ws_created');
    t.index(['workspace_id', 'updated_at', 'id'], 'visits_ws_updated');
    t.index(['workspace_id', 'status', 'created_at', 'id'], 'visits_ws_status');
    t.index(['workspace_id', 'client_id', 'created_at', 'id'], 'visits_ws_client_id');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('visits');
}
