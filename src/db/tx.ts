import type { Knex } from 'knex';
import { isMysql, retryingDeadlocks } from './dialect.js';

/**
 * The resources' writes (create, update, delete, their events and idempotency keys) run by the
 * driver itself, in a transaction of their own making: statements that knex compiled once (see
 * kernel/statements.ts) executed with their values on a connection taken from knex's pool, with
 * no query builder and no knex transaction per request (each costs more than the statement).
 *
 * SQLite: `BEGIN IMMEDIATE` takes the write lock first (a transaction that reads, then writes
 * after another process committed, would fail with SQLITE_BUSY_SNAPSHOT; one that starts with
 * the lock waits its turn), and the connection keeps its prepared statements (db/connect.ts).
 * MySQL: mysql2's `execute`, whose statement cache prepares each text once per connection.
 * Both: retried on deadlock, and a connection lost at COMMIT is told apart (retryingDeadlocks).
 */
export interface Tx {
  /** The rows a statement returns. */
  all(sql: string, values: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** A statement that writes. */
  run(sql: string, values: readonly unknown[]): Promise<void>;
}

type SqliteStatement = { all(...values: unknown[]): unknown[]; run(...values: unknown[]): unknown };
type SqliteConnection = { prepare(sql: string): SqliteStatement; inTransaction: boolean };
type Done = (err: Error | null, rows?: unknown) => void;
type MysqlConnection = { execute(sql: string, values: readonly unknown[], done: Done): void; query(sql: string, done: Done): void };
type Pool<C> = { acquireConnection(): Promise<C>; releaseConnection(connection: C): Promise<void> };

/** A value as the drivers bind it: booleans as 0 and 1 (better-sqlite3 binds no booleans), nothing as NULL. */
function bindable(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

const bind = (values: readonly unknown[]) => values.map(bindable);

function sqliteTx(connection: SqliteConnection): Tx {
  return {
    all: async (sql, values) => connection.prepare(sql).all(...bind(values)) as Record<string, unknown>[],
    run: async (sql, values) => void connection.prepare(sql).run(...bind(values)),
  };
}

function mysqlCall(connection: MysqlConnection, sql: string, values?: readonly unknown[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const done: Done = (err, rows) => (err ? reject(err) : resolve(rows));
    if (values) connection.execute(sql, bind(values), done);
    else connection.query(sql, done);
  });
}

function mysqlTx(connection: MysqlConnection): Tx {
  return {
    all: async (sql, values) => (await mysqlCall(connection, sql, values)) as Record<string, unknown>[],
    run: async (sql, values) => void (await mysqlCall(connection, sql, values)),
  };
}

/** Runs `work` in a write transaction on one of knex's connections; `work` must touch nothing but the database (it may run again). */
export async function writeTransaction<T>(db: Knex, work: (tx: Tx) => Promise<T>): Promise<T> {
  if (isMysql(db)) {
    const pool = db.client as unknown as Pool<MysqlConnection>;
    return retryingDeadlocks(async (committing) => {
      const connection = await pool.acquireConnection();
      try {
        await mysqlCall(connection, 'START TRANSACTION');
        try {
          const result = await work(mysqlTx(connection));
          committing();
          await mysqlCall(connection, 'COMMIT');
          return result;
        } catch (error) {
          // A lost connection rolls back by itself; knex's pool drops it when it is next validated.
          await mysqlCall(connection, 'ROLLBACK').catch(() => undefined);
          throw error;
        }
      } finally {
        await pool.releaseConnection(connection);
      }
    });
  }
  const pool = db.client as unknown as Pool<SqliteConnection>;
  return retryingDeadlocks(async (committing) => {
    const connection = await pool.acquireConnection();
    try {
      connection.prepare('BEGIN IMMEDIATE').run();
      try {
        const result = await work(sqliteTx(connection));
        committing();
        connection.prepare('COMMIT').run();
        return result;
      } catch (error) {
        if (connection.inTransaction) connection.prepare('ROLLBACK').run();
        throw error;
      }
    } finally {
      await pool.releaseConnection(connection);
    }
  });
}
