import type { Knex } from 'knex';
import { CommitOutcomeUnknown } from '../common/errors.js';

/** The few places where MySQL, PostgreSQL and SQLite report the same thing differently. */

export type Dialect = 'sqlite' | 'mysql' | 'postgres';

/** Which of the three backends `db` (or a query of it) talks to. */
export function dialectOf(db: Pick<Knex, 'client'>): Dialect {
  const client = db.client.config.client;
  return client === 'mysql2' ? 'mysql' : client === 'pg' ? 'postgres' : 'sqlite';
}

/**
 * Makes a condition that `field` (text) is one of `values` hold exactly on every backend, letter
 * case, accents and trailing spaces included: MySQL's collation ignores all three, so there the
 * column is compared once more as bytes, after its index has found the candidates. Nothing
 * elsewhere, where text compares exactly.
 */
export function bytewiseOnMysql(q: Knex.QueryBuilder, field: string, values: readonly string[]): void {
  if (dialectOf(q) === 'mysql') q.whereRaw(`cast(?? as binary) in (${values.map(() => '?').join(', ')})`, [field, ...values]);
}

/**
 * The collation a caseless column (an email) has on MySQL: utf8mb4's that ignores letter case
 * in MariaDB and MySQL 8 alike (npm run migrate:make gives it to such a column).
 */
export const CASELESS_COLLATION = 'utf8mb4_general_ci';

/**
 * Makes a condition that `field` (an email) is one of `values` without regard to letter case,
 * alike on every backend, `lower(field)` compared with each value in lower case, in a form the
 * field's filter index serves: PostgreSQL and SQLite index `lower(field)` itself (see
 * kernel/storage/migration-text.ts); MySQL, which has no such index before 8.0.13 and none on MariaDB,
 * indexes the column under CASELESS_COLLATION, so the values are first compared in that
 * collation (the index narrows; a column of another collation is still compared right, only
 * not by its index), then by `lower()` as everywhere else.
 */
export function caselessAmong(q: Knex.QueryBuilder, field: string, values: readonly string[]): void {
  const marks = values.map(() => '?').join(', ');
  const lowered = values.map((v) => v.toLowerCase());
  if (dialectOf(q) === 'mysql') q.whereRaw(`?? in (${values.map(() => `? collate ${CASELESS_COLLATION}`).join(', ')})`, [field, ...lowered]);
  q.whereRaw(`lower(??) in (${marks})`, [field, ...lowered]);
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  // Written to a connection the server had just closed (mysql2 on a pooled connection cut a moment before).
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
  // PostgreSQL: the server shut down or went away, too many connections, cannot connect now.
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08006',
]);

/** True for errors that mean "the database cannot be reached now", as opposed to a bug. */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof CommitOutcomeUnknown) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  // node-postgres, as a connection ends under a query or one is used after it ended.
  if (/^Connection terminated|^Client has encountered a connection error|^Client was closed/.test(error.message)) return true;
  return error.name === 'KnexTimeoutError';
}

/** MySQL/MariaDB. */
export function isMysql(db: Knex): boolean {
  return db.client.config.client === 'mysql2';
}

const DUPLICATE_CODES = new Set(['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE', '23505']);

/** An insert hit a primary or unique key that another row already holds. */
export function isDuplicateKey(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && DUPLICATE_CODES.has(code);
}

/**
 * InnoDB or PostgreSQL chose this transaction as a deadlock's victim, or PostgreSQL could not
 * serialise it: running it again is the documented cure.
 */
function isDeadlock(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ER_LOCK_DEADLOCK' || code === '40P01' || code === '40001';
}

const DEADLOCK_ATTEMPTS = 5;

/**
 * Runs one attempt of a write transaction, again (up to 5 times in all, after a short random
 * pause) if InnoDB picks it as a deadlock victim. `attempt` must touch nothing but the database,
 * since it may run more than once, and calls `committing()` just before it commits: a
 * connection lost from there on may have committed, which is told apart from a failure before
 * it (which certainly wrote nothing) as CommitOutcomeUnknown, so callers can find out or say so.
 */
export async function retryingDeadlocks<T>(attempt: (committing: () => void) => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    let committing = false;
    try {
      return await attempt(() => {
        committing = true;
      });
    } catch (error) {
      if (committing && isUnavailable(error)) throw new CommitOutcomeUnknown(error);
      if (tries >= DEADLOCK_ATTEMPTS || !isDeadlock(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * tries));
    }
  }
}

/**
 * Runs `work` in a knex write transaction (retried on deadlock, see retryingDeadlocks). Callers
 * lock rows in a fixed order so that the retry stays a safety net. The resources' writes run
 * through the driver instead (db/tx.ts); this is for everything off the hot path.
 */
export async function transaction<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const sqlite = dialectOf(db) === 'sqlite';
  if (sqlite) return inTurn(db, () => run(db, work, sqlite));
  return run(db, work, sqlite);
}

/** Each SQLite database's last transaction in line (see inTurn). */
const lastInLine = new WeakMap<Knex, Promise<void>>();

/**
 * SQLite answers synchronously, so a transaction runs start to end in one turn of the event
 * loop, and one waiting for the connection would start in the same turn, as the first one's
 * promise settles: the worker's transactions, one after another, held the loop 80 ms while
 * requests waited. In line instead, each one starting on a turn of its own.
 */
async function inTurn<T>(db: Knex, run: () => Promise<T>): Promise<T> {
  const previous = lastInLine.get(db) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  lastInLine.set(db, previous.then(() => mine));
  await previous;
  await new Promise((resolve) => setImmediate(resolve));
  try {
    return await run();
  } finally {
    done();
  }
}

function run<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>, sqlite: boolean): Promise<T> {
  return retryingDeadlocks((committing) =>
    db.transaction(async (trx) => {
      // SQLite: take the write lock first, as BEGIN IMMEDIATE would (knex only says BEGIN).
      // A transaction that reads, then writes after another process committed, fails with
      // SQLITE_BUSY_SNAPSHOT at once; one that starts with a write waits its turn instead.
      if (sqlite) await trx.raw('UPDATE workspaces SET id = id WHERE 0');
      const result = await work(trx);
      committing();
      return result;
    }),
  );
}

export interface ClaimSpec {
  table: string;
  key: string;
  /** What makes a row claimable now; checked again as the row is taken. */
  claimable: (q: Knex.QueryBuilder) => Knex.QueryBuilder;
  /** Which claimable rows come first. */
  order: string;
  limit: number;
  /** Written to the claimed rows; must single them out (a lease owner, a marker). */
  set: Record<string, unknown>;
}

/** How many of the first claimable rows a MySQL claim picks its `limit` from, at random. */
const CLAIM_WINDOW = 3;

/**
 * Claims up to `limit` rows inside the caller's transaction and returns their keys, so that
 * concurrent workers never claim the same row.
 *
 * MySQL/MariaDB: the candidates are read without locks; then those still claimable are locked
 * by primary key (FOR UPDATE SKIP LOCKED, forced onto the primary key) and updated by key. A
 * locking read over the secondary index would lock the index before the row, the reverse of
 * what every UPDATE by key of the same rows does (recording an attempt, another claim), and
 * MariaDB deadlocks the two; by key, in ascending order, there is one lock order everywhere.
 * Each claim picks its rows at random among the first few claimable ones, so that workers
 * claiming at once rarely want the same rows.
 *
 * PostgreSQL: one UPDATE over a subquery that locks the first claimable rows (FOR UPDATE SKIP
 * LOCKED: rows another claim holds are passed over), RETURNING the keys it took; its row locks
 * take no index locks, so there is no second lock order to keep.
 *
 * SQLite (no row locks, one writer): the same UPDATE without the locking clause, whose write
 * lock serialises the rest of the transaction.
 */
export async function claimRows(trx: Knex.Transaction, spec: ClaimSpec): Promise<string[]> {
  if (isMysql(trx)) {
    const locked = (await lockByKey(trx, spec, [spec.key])).map((r) => String(r[spec.key]));
    if (locked.length > 0) await trx(spec.table).whereIn(spec.key, locked).update(spec.set);
    return locked;
  }
  const first = spec.claimable(trx(spec.table).select(spec.key)).orderBy(spec.order).limit(spec.limit);
  const claimed = (await trx(spec.table)
    .whereIn(spec.key, dialectOf(trx) === 'postgres' ? first.forUpdate().skipLocked() : first)
    .update(spec.set, [spec.key])) as unknown as Record<string, unknown>[];
  return claimed.map((r) => String(r[spec.key]));
}

/**
 * MySQL's first step of a claim: up to `limit` of the first claimable rows (picked at random
 * among CLAIM_WINDOW times as many, read without locks), locked by primary key in ascending
 * order (FOR UPDATE SKIP LOCKED, forced onto the primary key), with their `columns`.
 */
async function lockByKey(trx: Knex.Transaction, spec: Omit<ClaimSpec, 'set'>, columns: readonly string[]): Promise<Record<string, unknown>[]> {
  const candidates = ((await spec.claimable(trx(spec.table).select(spec.key)).orderBy(spec.order).limit(spec.limit * CLAIM_WINDOW)) as Record<string, unknown>[]).map((r) => String(r[spec.key]));
  const wanted = pick(candidates, spec.limit).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (wanted.length === 0) return [];
  const byKey = trx.raw('?? FORCE INDEX (PRIMARY)', [spec.table]);
  return (await spec.claimable(trx.select(columns).from(byKey).whereIn(spec.key, wanted)).forUpdate().skipLocked()) as Record<string, unknown>[];
}

/** Up to `n` of `items`, chosen at random (all of them, in order, when there are no more than `n`). */
function pick<T>(items: T[], n: number): T[] {
  if (items.length <= n) return items;
  const copy = [...items];
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy.slice(0, n);
}

/** A queue table's entries to take, oldest key first. */
export interface TakeSpec {
  table: string;
  /** The primary key, in the order entries are taken. */
  key: string;
  /** What each entry taken answers. */
  columns: readonly string[];
  limit: number;
}

/**
 * Takes up to `limit` entries off a queue table inside the caller's transaction (deletes them)
 * and returns them, so that concurrent workers never take the same entry and one that crashes
 * leaves its entries there (its transaction rolls back).
 *
 * PostgreSQL: one DELETE of the keys a subquery locks (the first entries, FOR UPDATE SKIP
 * LOCKED), RETURNING them. SQLite: one DELETE of the first entries (one writer, no row locks).
 * MySQL/MariaDB: as claimRows, the candidates read without locks, some picked at random, locked
 * by primary key (SKIP LOCKED) and read, then deleted a statement a key, in one round trip:
 * over a small table MariaDB plans `DELETE ... WHERE key IN (...)` as a scan, which waits on
 * the entries other workers hold, and two of them deadlock; `key = ?` reads its one row.
 */
export async function takeQueued(trx: Knex.Transaction, spec: TakeSpec): Promise<Record<string, unknown>[]> {
  const dialect = dialectOf(trx);
  if (dialect === 'mysql') {
    const taken = await lockByKey(trx, { ...spec, claimable: (q) => q, order: spec.key }, spec.columns);
    if (taken.length > 0) await trx.raw(taken.map(() => 'DELETE FROM ?? WHERE ?? = ?').join(';\n'), taken.flatMap((row) => [spec.table, spec.key, String(row[spec.key])]));
    return taken;
  }
  const returning = `RETURNING ${spec.columns.map(() => '??').join(', ')}`;
  if (dialect === 'postgres') {
    // `= ANY(ARRAY(...))`: the entries taken are found by their key, where `IN (subquery)` was
    // planned as a hash join over the whole table, rows deleted and not yet vacuumed included.
    const sql = `DELETE FROM ?? WHERE ?? = ANY(ARRAY(SELECT ?? FROM ?? ORDER BY ?? LIMIT ? FOR UPDATE SKIP LOCKED)) ${returning}`;
    const result = (await trx.raw(sql, [spec.table, spec.key, spec.key, spec.table, spec.key, spec.limit, ...spec.columns])) as { rows: Record<string, unknown>[] };
    return result.rows;
  }
  // knex's DELETE on SQLite answers a count, not the rows: RETURNING is added to its text.
  const first = trx(spec.table).select(spec.key).orderBy(spec.key).limit(spec.limit);
  const { sql, bindings } = trx(spec.table).whereIn(spec.key, first).delete().toSQL();
  return (await trx.raw(`${sql} ${returning}`, [...bindings, ...spec.columns])) as Record<string, unknown>[];
}
