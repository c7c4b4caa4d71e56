import type { Knex } from 'knex';
import { dialectOf } from '../src/db/dialect.js';

/**
 * The request log of each key (docs/reference.md section 15), written in batches by each server process
 * (admin/request-log.ts) and kept RETENTION_DAYS:
 * - `key_requests`: one row per request made with a key, stored in the order a key's log is
 *   read (the primary key (key_id, at, id): newest first is a walk backwards), with one more
 *   index for the lists of one class of status (2, 4 or 5: `status_class`). `id` tells apart
 *   the requests of one key in one millisecond; each server process numbers its own. No
 *   foreign key: the log is written at the pace of the API, and its sweep finds its keys in
 *   the log itself;
 * - `key_request_errors`: the errors (status 400 and up) counted per key, UTC hour, status and
 *   error code, so the errors summary of 7 days reads a few hundred rows, not every request.
 */
export async function up(knex: Knex): Promise<void> {
  const columns = (t: Knex.CreateTableBuilder) => {
    t.string('key_id', 64).notNullable();
    // Epoch milliseconds when the request arrived.
    t.bigInteger('at').notNullable();
    t.bigInteger('id').notNullable();
    t.string('method', 16).notNullable();
    // The route's template as the OpenAPI document writes it (`/v1/deals/{id}`), or `unmatched`.
    t.string('route', 200).notNullable();
    t.string('path', 1024).notNullable();
    t.smallint('status').notNullable();
    t.tinyint('status_class').notNullable();
    t.string('error_code', 64).nullable();
    // Microseconds from the request's arrival to its answer.
    t.integer('duration_us').notNullable();
    t.string('request_id', 128).notNullable();
    t.string('ip', 45).notNullable();
  };
  if (dialectOf(knex) !== 'sqlite') {
    await knex.schema.createTable('key_requests', (t) => {
      columns(t);
      t.primary(['key_id', 'at', 'id']);
      t.index(['key_id', 'status_class', 'at', 'id'], 'key_requests_key_class_at');
    });
  } else {
    // SQLite: the table is its primary key's tree (WITHOUT ROWID), as InnoDB's is, instead of a
    // rowid table beside a second tree for the same key.
    const sql = knex.schema.createTable('key_requests', columns).toSQL()[0]!.sql;
    await knex.raw(`${sql.replace(/\)$/, ', PRIMARY KEY (`key_id`, `at`, `id`))')} WITHOUT ROWID`);
    await knex.schema.alterTable('key_requests', (t) => {
      t.index(['key_id', 'status_class', 'at', 'id'], 'key_requests_key_class_at');
    });
  }
  await knex.schema.createTable('key_request_errors', (t) => {
    t.string('key_id', 64).notNullable().references('id').inTable('api_keys').onDelete('CASCADE');
    // The hour's first millisecond (UTC).
    t.bigInteger('hour').notNullable();
    t.smallint('status').notNullable();
    // '' for an error answered without a code of ours.
    t.string('error_code', 64).notNullable();
    t.integer('requests').notNullable();
    t.primary(['key_id', 'hour', 'status', 'error_code']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('key_request_errors');
  await knex.schema.dropTable('key_requests');
}
