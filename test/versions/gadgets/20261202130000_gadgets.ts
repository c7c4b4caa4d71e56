/**
 * Written by `npm run migrate:make` from the plugins' declarations:
 *   create table gadgets (11 columns, 6 indexes) (test/versions/gadgets/gadgets.ts)
 * Read it, then commit it beside the plugins. `npm run migrate -- rollback` undoes it.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // Emails compare without regard to letter case, by their lower case: PostgreSQL and SQLite
  // index lower(column); MySQL indexes the column, under a collation that ignores case.
  const mysql = knex.client.config.client === 'mysql2';
  const caseless = (column: Knex.ColumnBuilder) => (mysql ? column.collate('utf8mb4_general_ci') : column);
  await knex.schema.createTable('gadgets', (t) => {
    t.string('id', 64).primary();
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.string('label', 100).notNullable();
    t.string('close_date', 10).nullable();
    caseless(t.string('owner_email', 254)).nullable();
    t.integer('size_cm').nullable();
    t.string('client_id', 64).nullable();
    t.string('status', 16).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.integer('version').notNullable().defaultTo(1);
    t.index(['workspace_id', 'created_at', 'id'], 'gadgets_ws_created');
    t.index(['workspace_id', 'updated_at', 'id'], 'gadgets_ws_updated');
    t.index(['workspace_id', 'close_date', 'id'], 'gadgets_by_close_date');
    t.index(['workspace_id', 'size_cm', 'id'], 'gadgets_by_size_cm');
    t.index(['workspace_id', 'status', 'created_at', 'id'], 'gadgets_ws_status');
    t.index(['workspace_id', 'client_id', 'created_at', 'id'], 'gadgets_ws_client_id');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('gadgets');
}
