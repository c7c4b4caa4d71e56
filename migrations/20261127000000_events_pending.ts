import type { Knex } from 'knex';
import { dialectOf } from '../src/db/dialect.js';

/**
 * The events awaiting fan-out get a table of their own, `events_pending`: a write adds there,
 * in its transaction, each event's id (the key) and what routes it (workspace, type, object,
 * time), and the fan-out takes (deletes) the entries it claims, with no need to read the events
 * themselves. Before, the fan-out marked each event's own row (`events.dispatched_at`), and
 * that column was indexed: on PostgreSQL each mark wrote a new version of the event's row
 * (payload and all) and an entry in each of its four indexes, a fifth of a write's throughput
 * with an idle inline worker. An entry is written once and deleted once.
 * Retention now finds events by when they were made (`events_created`, on columns that never
 * change), and keeps those still pending; so `dispatched_at` and its index go.
 */
export async function up(knex: Knex): Promise<void> {
  if (dialectOf(knex) === 'sqlite') {
    // Kept in the B-tree of its key: one tree, not a rowid table and an index.
    await knex.raw(
      'CREATE TABLE events_pending (event_id varchar(64) NOT NULL PRIMARY KEY, workspace_id varchar(64) NOT NULL, type varchar(100) NOT NULL, object_id varchar(64) NOT NULL, created_at bigint NOT NULL) WITHOUT ROWID',
    );
  } else {
    await knex.schema.createTable('events_pending', (t) => {
      t.string('event_id', 64).notNullable().primary();
      t.string('workspace_id', 64).notNullable();
      t.string('type', 100).notNullable();
      t.string('object_id', 64).notNullable();
      t.bigInteger('created_at').notNullable();
    });
  }
  await knex.raw(
    'INSERT INTO events_pending (event_id, workspace_id, type, object_id, created_at) SELECT id, workspace_id, type, object_id, created_at FROM events WHERE dispatched_at IS NULL OR dispatched_at <= 0',
  );
  await knex.schema.alterTable('events', (t) => {
    t.dropIndex(['dispatched_at', 'seq'], 'events_undispatched');
    t.index(['created_at', 'seq'], 'events_created');
  });
  await knex.raw('ALTER TABLE events DROP COLUMN dispatched_at');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.bigInteger('dispatched_at').nullable();
  });
  await knex.raw('UPDATE events SET dispatched_at = created_at WHERE id NOT IN (SELECT event_id FROM events_pending)');
  await knex.schema.alterTable('events', (t) => {
    t.dropIndex(['created_at', 'seq'], 'events_created');
    t.index(['dispatched_at', 'seq'], 'events_undispatched');
  });
  await knex.schema.dropTable('events_pending');
}
