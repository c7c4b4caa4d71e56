import type { Knex } from 'knex';
import type { DatabaseConfig } from '../common/config.js';
import { CommitOutcomeUnknown } from '../common/errors.js';
import type { Reads } from './reads.js';
import type { Tx } from './tx.js';

/**
 * What every database has in common (errors that mean "unavailable", "duplicate key" or
 * "deadlock", the retry of a deadlocked transaction), and the shape of a `Dialect`: the one
 * object per database (db/dialects/) that owns every difference between SQLite, MySQL and
 * PostgreSQL. Code outside src/db/ asks the dialect what to do, never which database it is.
 */

export type DialectName = 'sqlite' | 'mysql' | 'postgres';

/**
 * Which of the three backends `db` (or a query of it) talks to: for src/db/ and the migrations,
 * which branch on it; everything else uses the dialect itself (db/dialects/index.ts).
 */
export function dialectOf(db: Pick<Knex, 'client'>): DialectName {
  const client = db.client.config.client;
  return client === 'mysql2' ? 'mysql' : client === 'pg' ? 'postgres' : 'sqlite';
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

/** Runs `work` in a knex transaction, retried on deadlock; `begin` runs first in it (SQLite's write lock). */
export function knexTransaction<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>, begin?: (trx: Knex.Transaction) => Promise<unknown>): Promise<T> {
  return retryingDeadlocks((committing) =>
    db.transaction(async (trx) => {
      if (begin) await begin(trx);
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

/** A queue table's entries to take, oldest key first. */
export interface TakeSpec {
  table: string;
  /** The primary key, in the order entries are taken. */
  key: string;
  /** What each entry taken answers. */
  columns: readonly string[];
  limit: number;
}

/** Of each group of a table's rows (those with the same values in `by`), the first by `order`. On SQLite the table must have a rowid. */
export interface FirstSpec {
  table: string;
  /** The columns a group shares (text); `groups` gives each group's values, in this order. */
  by: readonly string[];
  groups: ReadonlyArray<readonly string[]>;
  /** Rows whose `order` is null belong to no group; an index on (...by, order) over the rest serves each group with one probe. */
  order: string;
  columns: readonly string[];
}

/**
 * Claims the first claimable rows by one UPDATE over a subquery of them (`lock` adds a locking
 * clause to it, or leaves it) and answers the keys it took.
 */
export async function claimFirst(trx: Knex.Transaction, spec: ClaimSpec, lock: (first: Knex.QueryBuilder) => Knex.QueryBuilder): Promise<string[]> {
  const first = spec.claimable(trx(spec.table).select(spec.key)).orderBy(spec.order).limit(spec.limit);
  const claimed = (await trx(spec.table).whereIn(spec.key, lock(first)).update(spec.set, [spec.key])) as unknown as Record<string, unknown>[];
  return claimed.map((r) => String(r[spec.key]));
}

/** Narrows `q` to rows whose `lower(field)` is one of `values` in lower case (an email's filter). */
export function loweredAmong(q: Knex.QueryBuilder, field: string, values: readonly string[]): void {
  q.whereRaw(`lower(??) in (${values.map(() => '?').join(', ')})`, [field, ...values.map((v) => v.toLowerCase())]);
}

/**
 * One database's ways (docs/contributing.md: a fourth database is one more file of
 * db/dialects/). Reached through `Deps.dialect`, or `dialectFor(db)` where only the connection is at hand.
 */
export interface Dialect {
  /** For logs and the start-up line only: code asks the dialect what to do, never its name. */
  readonly name: DialectName;
  /** Events one fan-out round takes (SQLite's statements hold the event loop: fewer). */
  readonly fanOutBatch: number;
  /**
   * How long a worker gathers finished attempts into one record when a per_object line waits for
   * it (webhooks/recorder.ts): short where a commit is cheap and in-process (SQLite), longer where
   * each statement costs the database server's CPU.
   */
  readonly lineRecordWaitMs: number;
  /** Whether the search terms have their (object_id, term) index (migrations/20261125000000_search.ts). */
  readonly termsByObject: boolean;
  /** Whether the database itself can carry the wake-up signal between processes (PostgreSQL's LISTEN/NOTIFY). */
  readonly notifies: boolean;

  /** A statement written with `?` marks as this database's driver takes it (PostgreSQL numbers them). */
  driverText(sql: string): string;
  /** `insert` (an `INSERT INTO ... VALUES ...`) skipping each row whose key another row holds. */
  insertIgnoring(insert: string): string;
  /** `insert` into `table` adding its `counters` to those of the row that holds its `key` already, when one does (an upsert that counts). */
  insertAdding(insert: string, table: string, key: readonly string[], counters: readonly string[]): string;

  /** Makes a condition of `q` that text `field` is one of `values` hold exactly: letter case, accents and trailing spaces included. */
  textExactly(q: Knex.QueryBuilder, field: string, values: readonly string[]): void;
  /** Narrows `q` to rows whose `field` (an email) is one of `values` without regard to letter case, in a form its filter index serves. */
  caselessAmong(q: Knex.QueryBuilder, field: string, values: readonly string[]): void;

  /** Where a keyset page past a cursor reads from: the table, or the table held to its sort's keyset `index` (an index hint). */
  keysetSource(db: Knex, table: string, index: string): string | Knex.Raw;
  /** A table read through one of its indexes where the planner would not choose it. */
  indexedBy(db: Knex, table: string, index: string): string | Knex.Raw;
  /** A resource table whose rows a search's few matches name, read by those matches (see kernel/storage/search-index.ts). */
  drivenByTerms(db: Knex, table: string, workspaceId: string): Knex.QueryBuilder;
  /** Narrows `q` to the rows whose `column` is among those `matches` selects, the matches driving the query. */
  drivenBy(q: Knex.QueryBuilder, column: string, matches: Knex.QueryBuilder): Knex.QueryBuilder;
  /** The names of a table's indexes. */
  indexNames(db: Knex, table: string): Promise<Set<string>>;

  /** Claims up to `limit` rows in the caller's transaction and answers their keys; concurrent claims never take the same row. */
  claimRows(trx: Knex.Transaction, spec: ClaimSpec): Promise<string[]>;
  /** Takes (deletes) up to `limit` entries off a queue table in the caller's transaction and answers them; concurrent takers never take the same one. */
  takeQueued(trx: Knex.Transaction, spec: TakeSpec): Promise<Record<string, unknown>[]>;
  /** Of each group of `spec.table`'s rows, its first (FirstSpec), in one statement and no particular order. */
  firstOfGroups(db: Knex | Knex.Transaction, spec: FirstSpec): Promise<Record<string, unknown>[]>;
  /** Runs `work` in a knex write transaction, retried on deadlock (off the hot path). */
  transaction<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /** Runs `work` in a write transaction of the driver's own (the resources' writes, db/tx.ts). */
  writeTransaction<T>(db: Knex, work: (tx: Tx) => Promise<T>): Promise<T>;
  /** The hot path's reads, run by the driver (db/reads.ts). */
  reads(db: Knex, database: DatabaseConfig): Reads;
}
