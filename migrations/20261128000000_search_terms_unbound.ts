import type { Knex } from 'knex';
import { dialectOf } from '../src/db/dialect.js';

/**
 * On MySQL and PostgreSQL, `search_terms` loses its foreign key to `workspaces`: each term a
 * write adds (three a deal here, 300 a batch of 100) was checked against the workspace's row,
 * and on PostgreSQL each check is a trigger that reads and share-locks that row. The terms are
 * an index the kernel writes from the objects, always with the workspace of the key that
 * writes (kernel/storage/search-index.ts), and the service deletes no workspace: the check guarded
 * nothing the service can do, as `key_requests`, written at the API's pace too, has none.
 * Measured on PostgreSQL 15 here: 100 objects' 300 terms in one transaction 3.1 against 2.2 ms,
 * one object's 0.43-0.47 against 0.39 ms a transaction. SQLite keeps its key: its check is one
 * lookup in the same file, no measurable part of a write, and dropping it means rebuilding the
 * table.
 *
 * Down adds it again, after deleting the terms of any workspace that is no more (a workspace
 * deleted by hand meanwhile), which the key would refuse.
 */
const FOREIGN_KEY = 'search_terms_workspace_id_foreign';

export async function up(knex: Knex): Promise<void> {
  if (dialectOf(knex) === 'sqlite') return;
  await knex.schema.alterTable('search_terms', (t) => t.dropForeign(['workspace_id'], FOREIGN_KEY));
}

export async function down(knex: Knex): Promise<void> {
  if (dialectOf(knex) === 'sqlite') return;
  await knex('search_terms').whereNotIn('workspace_id', knex('workspaces').select('id')).delete();
  await knex.schema.alterTable('search_terms', (t) => t.foreign('workspace_id', FOREIGN_KEY).references('id').inTable('workspaces').onDelete('CASCADE'));
}
