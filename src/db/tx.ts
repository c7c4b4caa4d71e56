import type { Knex } from 'knex';
import { isMysql, retryingDeadlocks } from './dialect.js';
import { mysqlCall, withConnection, type MysqlConnection, type SqliteConnection } from './driver.js';

/**
 * The resources' writes (create, update, delete, their events and idempotency keys) run by the
 * driver itself, in a transaction of their own making: statements that knex compiled once (see
 * db/prepared.ts and kernel/store.ts) executed with their values on a connection taken from knex's pool, with
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

/** A value as the drivers bind it: booleans as 0 and 1 (better-sqlite3 binds no booleans), nothing as NULL. */
function bindable(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

const bind = (values: readonly unknown[]) => values.map(bindable);

/** A transaction's statements on one connection, and how it begins, commits and rolls back. */
interface Session extends Tx {
  control(sql: 'BEGIN' | 'COMMIT' | 'ROLLBACK'): Promise<void>;
}

function sqliteSession(connection: SqliteConnection): Session {
  const run = async (sql: string, values: readonly unknown[] = []) => void connection.prepare(sql).run(...bind(values));
  return {
    all: async (sql, values) => connection.prepare(sql).all(...bind(values)) as Record<string, unknown>[],
    run,
    control: (sql) => run(sql === 'BEGIN' ? 'BEGIN IMMEDIATE' : sql),
  };
}

function mysqlSession(connection: MysqlConnection): Session {
  return {
    all: (sql, values) => mysqlCall(connection, sql, bind(values)),
    run: async (sql, values) => void (await mysqlCall(connection, sql, bind(values))),
    control: async (sql) => void (await mysqlCall(connection, sql === 'BEGIN' ? 'START TRANSACTION' : sql)),
  };
}

/** Runs `work` in a write transaction on one of knex's connections; `work` must touch nothing but the database (it may run again). */
export function writeTransaction<T>(db: Knex, work: (tx: Tx) => Promise<T>): Promise<T> {
  const open = (connection: unknown) => (isMysql(db) ? mysqlSession(connection as MysqlConnection) : sqliteSession(connection as SqliteConnection));
  return retryingDeadlocks((committing) =>
    withConnection(db, async (connection) => {
      const session = open(connection);
      await session.control('BEGIN');
      try {
        const result = await work(session);
        committing();
        await session.control('COMMIT');
        return result;
      } catch (error) {
        // Nothing to roll back once the connection is lost (knex's pool then drops it) or the
        // COMMIT went through: the error that got here is the one to report.
        await session.control('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }),
  );
}
