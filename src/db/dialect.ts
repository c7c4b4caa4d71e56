import type { Knex } from 'knex';

/** The few places where MySQL and SQLite report the same thing differently. */

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
 * Runs `work` in a transaction, again (up to 3 times in all) if InnoDB picks it as a deadlock
 * victim. `work` must touch nothing but the database, since it may run more than once.
 */
export async function transaction<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(work);
    } catch (error) {
      if (attempt >= 3 || !isDeadlock(error)) throw error;
    }
  }
}
