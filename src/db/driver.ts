import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * The drivers under knex, reached directly on the hot path (db/reads.ts, db/tx.ts): a
 * connection borrowed from knex's pool, and mysql2's calls as promises.
 */

type Done = (err: Error | null, rows?: unknown) => void;
export type MysqlConnection = { execute(sql: string, values: readonly unknown[], done: Done): void; query(sql: string, values: readonly unknown[] | Done, done?: Done): void };
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

/**
 * mysql2: several statements in one round trip (the connections allow it: db/connect.ts), their
 * values escaped by the driver as knex's own queries are (`query` with values), not prepared.
 */
export function mysqlStatements(connection: MysqlConnection, sql: string, values: readonly unknown[]): Promise<void> {
  return new Promise((resolve, reject) => connection.query(sql, values, (err) => (err ? reject(err) : resolve())));
}

/** mysql2: `execute` (a statement prepared once per connection, by its cache) with values, or `query` without. */
export function mysqlCall(connection: MysqlConnection, sql: string, values?: readonly unknown[]): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    const done: Done = (err, rows) => (err ? reject(err) : resolve(rows as Record<string, unknown>[]));
    if (values) connection.execute(sql, values, done);
    else connection.query(sql, done);
  });
}

export type PgConnection = { query(config: string | { name?: string; text: string; values?: unknown[] }): Promise<{ rows: Record<string, unknown>[] }> };

/** Each statement text's name as a PostgreSQL prepared statement: the same text, the same name, on every connection. */
const pgNames = new Map<string, string>();

/**
 * Texts a connection keeps prepared at most: the service's statements number a few hundred
 * (batches and `[in]` lists of each length among them); past this, a new text runs unnamed
 * (parsed each time), so that no connection's server process grows without bound.
 */
const PG_NAMED = 5000;

function pgName(sql: string): string | undefined {
  let name = pgNames.get(sql);
  if (name === undefined && pgNames.size < PG_NAMED) pgNames.set(sql, (name = `ws_${createHash('sha256').update(sql).digest('base64url').slice(0, 24)}`));
  return name;
}

/**
 * node-postgres: a statement with values as a named prepared statement (parsed once per
 * connection, which remembers the names it parsed), or a text without.
 */
export async function pgCall(connection: PgConnection, sql: string, values?: readonly unknown[]): Promise<Record<string, unknown>[]> {
  try {
    const name = values ? pgName(sql) : undefined;
    const result = await connection.query(values ? { ...(name ? { name } : {}), text: sql, values: [...values] } : sql);
    return result.rows;
  } catch (error) {
    // As mysql2 does: the statement's text (its placeholders, never its values) on the error, for the log's summary (db/errors.ts).
    if (error instanceof Error) Object.assign(error, { sql });
    throw error;
  }
}

/** A text written with `?` for its values, as PostgreSQL numbers them ($1, $2...); no `?` may appear in a string literal. */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
