import type { Knex } from 'knex';
import { dialectOf } from '../src/db/dialect.js';

/**
 * Search (docs/reference.md section 14): the words of every object's searchable fields (kernel/query/search.ts),
 * one row per (workspace, resource, term, object), sought by prefix on the primary key. The
 * object's creation time comes before its id in the key, so that a common word's new rows are
 * added at the end of its range rather than all over it (a batch of 100 would otherwise touch
 * a page per row); an object's rows are deleted by their whole key, made again from the
 * object as it was. Terms compare byte by byte
 * (utf8mb4_bin on MySQL, SQLite's BINARY): they are stored folded, and a prefix range ends at
 * U+10FFFF. `search_indexed` says which fields each resource's terms were made from, so that a
 * server whose plugins search other fields (or a database from before this table) indexes the
 * objects already there at start-up.
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  const mysql = dialect === 'mysql';
  await knex.schema.createTable('search_terms', (t) => {
    if (mysql) t.charset('utf8mb4');
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.string('resource', 64).notNullable();
    const term = t.string('term', 64).notNullable();
    if (mysql) term.collate('utf8mb4_bin');
    // PostgreSQL: byte order (the C collation), in which the prefix range's index seek is exact.
    if (dialect === 'postgres') term.collate('C');
    t.bigInteger('created_at').notNullable();
    t.string('object_id', 64).notNullable();
    t.primary(['workspace_id', 'resource', 'term', 'created_at', 'object_id']);
    // MariaDB and PostgreSQL walk a list's index for a common word and ask, row by row,
    // whether the object has a term starting with it: this index answers in one seek (without
    // it, a page of q=website over 110,000 deals took 430 ms on MariaDB, 900 on PostgreSQL).
    // SQLite's plan reads the word's terms once instead and never asks by object, so it is
    // spared the index's writes.
    if (dialect !== 'sqlite') t.index(['object_id', 'term'], 'search_terms_object');
  });
  await knex.schema.createTable('search_indexed', (t) => {
    t.string('resource', 64).primary();
    t.string('fields', 1000).notNullable();
    t.bigInteger('indexed_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('search_indexed');
  await knex.schema.dropTable('search_terms');
}
