import Database from 'better-sqlite3';
import type { DatabaseConfig } from '../config.js';

/**
 * Tells whether any connection (another process, or another connection of this one) has
 * committed to the SQLite file since a version was read: `PRAGMA data_version` on a connection
 * of its own, synchronous, a few microseconds, no query through the pool. What it guards can be
 * cached until the file changes. None for MySQL (Redis tells of revocations there) or memory.
 */
export interface ChangeCounter {
  version(): number;
  close(): void;
}

export function sqliteChangeCounter(database: DatabaseConfig): ChangeCounter | undefined {
  if (database.client !== 'sqlite' || database.filename === ':memory:') return undefined;
  const connection = new Database(database.filename);
  // Prepared once: pragma() would compile the statement again on every request.
  const dataVersion = connection.prepare('PRAGMA data_version').pluck();
  return {
    version: () => dataVersion.get() as number,
    close: () => connection.close(),
  };
}
