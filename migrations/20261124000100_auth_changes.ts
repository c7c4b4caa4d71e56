import type { Knex } from 'knex';

/**
 * One counter that every change to what a key may do bumps in its own transaction (a key
 * revoked, a workspace's plan changed): on SQLite a process keeps looked-up keys while it
 * stays the same, read in microseconds per request (db/changes.ts), where the file's
 * data_version, which every write moves, emptied the cache under any write load.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('auth_changes', (t) => {
    t.integer('id').primary();
    t.bigInteger('version').notNullable().defaultTo(0);
  });
  await knex('auth_changes').insert({ id: 1, version: 0 });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('auth_changes');
}
