import type { Knex } from 'knex';
import { dialectOf } from '../src/db/dialect.js';

/**
 * On SQLite and PostgreSQL, the request log's second index (a key's requests of one status
 * class, newest first) keeps the answers that are not successes only: a partial index,
 * `WHERE status_class <> 2`. Nearly every request a key makes succeeds, and each one logged
 * wrote an entry there as well as in the log's own key; a key's successes are most of its log,
 * so listing them walks the log's primary key and finds a page at once, while its errors, which
 * may be few among many, are still found by the index (admin/request-log.ts names its condition
 * so that both planners use it). MySQL has no partial index and keeps the whole one.
 */
const WHOLE = 'key_requests_key_class_at';
const ERRORS = 'key_requests_key_errors';
const COLUMNS = 'key_id, status_class, at, id';

export async function up(knex: Knex): Promise<void> {
  if (dialectOf(knex) === 'mysql') return;
  await knex.raw(`CREATE INDEX ${ERRORS} ON key_requests (${COLUMNS}) WHERE status_class <> 2`);
  await knex.raw(`DROP INDEX ${WHOLE}`);
}

export async function down(knex: Knex): Promise<void> {
  if (dialectOf(knex) === 'mysql') return;
  await knex.raw(`CREATE INDEX ${WHOLE} ON key_requests (${COLUMNS})`);
  await knex.raw(`DROP INDEX ${ERRORS}`);
}
