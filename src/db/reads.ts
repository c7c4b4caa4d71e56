import Database from 'better-sqlite3';
import type { Knex } from 'knex';
import type { DatabaseConfig } from '../common/config.js';
import { dialectFor } from './dialects/index.js';

/**
 * The hot path's reads (a list page, one object) run by the driver itself: statements that
 * knex compiled once with named values (db/prepared.ts; a resource's are its store's, kernel/storage/store.ts) are prepared once per connection and executed
 * with their values, without a query builder per request. On SQLite a read-only connection of
 * its own keeps its prepared statements (WAL: it reads beside the writer and sees every
 * commit); on MySQL, mysql2's `execute` on a connection of knex's pool, whose statement cache
 * prepares each text once per connection; on PostgreSQL, node-postgres's named statements,
 * each parsed once per connection. An in-memory SQLite database, which a second
 * connection cannot see, reads through knex.
 */
export interface Reads {
  all(sql: string, values: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /**
   * The rows of a statement whose columns the caller knows, as objects built the fastest way
   * the driver allows. SQLite: read as arrays and built by `rowOf` (one object literal, see
   * kernel/storage/rows.ts), as better-sqlite3 builds a row object through V8's API a property at a
   * time: a page of 50 deals takes about 70 microseconds instead of 100, and the list serves
   * 15% more requests a second. mysql2 and node-postgres build objects in JavaScript already:
   * their arrays, turned into objects again, measured 5% to 10% slower, so there it is all().
   */
  rows(sql: string, values: readonly unknown[], rowOf: (values: unknown[]) => Record<string, unknown>): Promise<Record<string, unknown>[]>;
  close(): void;
}

/** The hot path's reads of `db`, as its dialect runs them. */
export function createReads(db: Knex, database: DatabaseConfig): Reads {
  return dialectFor(db).reads(db, database);
}

/** Reads by a server's driver: `call` runs a statement on a connection of knex's pool. */
export function driverReads(call: (sql: string, values: readonly unknown[]) => Promise<Record<string, unknown>[]>): Reads {
  return { all: call, rows: call, close() {} };
}

/** SQLite's reads: a read-only connection of their own, or knex's for a database in memory (which no second connection sees). */
export function sqliteReads(db: Knex, database: DatabaseConfig): Reads {
  if (database.client !== 'sqlite' || database.filename === ':memory:') {
    const all = async (sql: string, values: readonly unknown[]) => (await db.raw(sql, values as Knex.RawBinding[])) as Record<string, unknown>[];
    return { all, rows: all, close() {} };
  }
  let connection: Database.Database | undefined;
  // A statement's rows come as objects or as arrays (its raw mode): one prepared statement for each way.
  const prepared = new Map<string, Database.Statement>();
  const raw = new Map<string, Database.Statement>();
  const statementOf = (sql: string, arrays: boolean): Database.Statement => {
    const kept = arrays ? raw : prepared;
    let statement = kept.get(sql);
    if (!statement) {
      // Opened at the first read: the file exists by then (start-up migrated it).
      connection ??= new Database(database.filename, { readonly: true, fileMustExist: true, timeout: 5000 });
      statement = connection.prepare(sql);
      if (arrays) statement.raw(true);
      kept.set(sql, statement);
    }
    return statement;
  };
  return {
    all: async (sql, values) => statementOf(sql, false).all(...values) as Record<string, unknown>[],
    rows: async (sql, values, rowOf) => (statementOf(sql, true).all(...values) as unknown[][]).map(rowOf),
    close() {
      connection?.close();
    },
  };
}
