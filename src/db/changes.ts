import Database from 'better-sqlite3';
import type { Knex } from 'knex';
import type { DatabaseConfig } from '../common/config.js';

/**
 * What tells a process that a key it looked up may no longer be what the database says: the
 * counter of auth_changes, which every change to what a key may do bumps in its own
 * transaction (noteAuthChange). On SQLite it is read through a statement prepared once on a
 * connection of its own (synchronous, no query through the pool), once per turn of the event
 * loop: the requests a turn handles share that reading. Each of them was read from its socket
 * in that turn, so it was sent before the reading; a request sent after a revocation committed
 * is handled in a later turn and reads the counter again. None for MySQL (Redis tells of
 * revocations there, and the key cache lives a second) or an in-memory database.
 */
export interface ChangeCounter {
  version(): number;
  close(): void;
}

/** Called in the transaction of a revocation or a plan change: every process's cached keys end with its commit. */
export async function noteAuthChange(trx: Knex.Transaction): Promise<void> {
  await trx('auth_changes').where({ id: 1 }).increment('version', 1);
}

export function sqliteChangeCounter(database: DatabaseConfig): ChangeCounter | undefined {
  if (database.client !== 'sqlite' || database.filename === ':memory:') return undefined;
  const connection = new Database(database.filename);
  let statement: Database.Statement | undefined;
  const read = (): number => {
    try {
      statement ??= connection.prepare('SELECT version FROM auth_changes WHERE id = 1').pluck();
      return statement.get() as number;
    } catch {
      // Not migrated yet: a value equal to nothing, itself included, so nothing is kept.
      return NaN;
    }
  };
  // This turn's reading; forgotten when the turn ends.
  let reading: number | undefined;
  const forget = () => (reading = undefined);
  return {
    version() {
      if (reading === undefined) {
        reading = read();
        setImmediate(forget);
      }
      return reading;
    },
    close: () => connection.close(),
  };
}
