import type { Knex } from 'knex';

/**
 * The drivers under knex, reached directly on the hot path (db/reads.ts, db/tx.ts): a
 * connection borrowed from knex's pool, and mysql2's calls as promises.
 */

type Done = (err: Error | null, rows?: unknown) => void;
export type MysqlConnection = { execute(sql: string, values: readonly unknown[], done: Done): void; query(sql: string, done: Done): void };
export type SqliteConnection = { prepare(sql: string): { all(...values: unknown[]): unknown[]; run(...values: unknown[]): unknown } };

/** Runs `use` on a connection of knex's pool (waiting for one as knex would), then gives it back. */
export async function withConnection<C, T>(db: Knex, use: (connection: C) => Promise<T>): Promise<T> {
  const pool = db.client as unknown as { acquireConnection(): Promise<C>; releaseConnection(connection: C): Promise<void> };
  const connection = await pool.acquireConnection();
  try {
    return await use(connection);
  } finally {
    await pool.releaseConnection(connection);
  }
}

/** mysql2: `execute` (a statement prepared once per connection, by its cache) with values, or `query` without. */
export function mysqlCall(connection: MysqlConnection, sql: string, values?: readonly unknown[]): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    const done: Done = (err, rows) => (err ? reject(err) : resolve(rows as Record<string, unknown>[]));
    if (values) connection.execute(sql, values, done);
    else connection.query(sql, done);
  });
}
