import type { Knex } from 'knex';

/** The few places where MySQL and SQLite report the same thing differently. */

/** MySQL/MariaDB, as opposed to the embedded SQLite. */
export function isMysql(db: Knex): boolean {
  return db.client.config.client === 'mysql2';
}

const DUPLICATE_CODES = new Set(['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE']);

/** An insert hit a primary or unique key that another row already holds. */
export function isDuplicateKey(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && DUPLICATE_CODES.has(code);
}

/** InnoDB chose this transaction as a deadlock's victim; running it again is the documented cure. */
function isDeadlock(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ER_LOCK_DEADLOCK';
}

/**
 * Runs `work` in a write transaction, again (up to 3 times in all) if InnoDB picks it as a
 * deadlock victim. `work` must touch nothing but the database, since it may run more than once.
 */
export async function transaction<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const sqlite = !isMysql(db);
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(async (trx) => {
        // SQLite: take the write lock first, as BEGIN IMMEDIATE would (knex only says BEGIN).
        // A transaction that reads, then writes after another process committed, fails with
        // SQLITE_BUSY_SNAPSHOT at once; one that starts with a write waits its turn instead.
        if (sqlite) await trx.raw('UPDATE workspaces SET id = id WHERE 0');
        return work(trx);
      });
    } catch (error) {
      if (attempt >= 3 || !isDeadlock(error)) throw error;
    }
  }
}

export interface ClaimSpec {
  table: string;
  key: string;
  /** Narrows and orders the candidates; the claim takes the first `limit`. */
  candidates: (q: Knex.QueryBuilder) => Knex.QueryBuilder;
  limit: number;
  /** Written to the claimed rows; must single them out (a lease owner, a marker). */
  set: Record<string, unknown>;
}

/**
 * Claims up to `limit` rows inside the caller's transaction and returns their keys, so that
 * concurrent workers never claim the same row. MySQL/MariaDB: SELECT ... FOR UPDATE SKIP
 * LOCKED, then UPDATE those rows. SQLite (no row locks, one writer): one UPDATE over a
 * subquery, whose write lock serialises the rest of the transaction, then read back by `set`.
 */
export async function claimRows(trx: Knex.Transaction, spec: ClaimSpec): Promise<string[]> {
  if (isMysql(trx)) {
    const rows = (await spec.candidates(trx(spec.table).select(spec.key)).limit(spec.limit).forUpdate().skipLocked()) as Record<string, unknown>[];
    const keys = rows.map((r) => String(r[spec.key]));
    if (keys.length > 0) await trx(spec.table).whereIn(spec.key, keys).update(spec.set);
    return keys;
  }
  await trx(spec.table)
    .whereIn(spec.key, spec.candidates(trx(spec.table).select(spec.key)).limit(spec.limit))
    .update(spec.set);
  const rows = (await trx(spec.table).select(spec.key).where(spec.set)) as Record<string, unknown>[];
  return rows.map((r) => String(r[spec.key]));
}
