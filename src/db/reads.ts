import Database from 'better-sqlite3';
import type { Knex } from 'knex';
import type { DatabaseConfig } from '../common/config.js';
import { mysqlCall, pgCall, withConnection, type MysqlConnection, type PgConnection } from './driver.js';

/**
 * The hot path's reads (a list page, one object) run by the driver itself: statements that
 * knex compiled once with named values (db/prepared.ts; a resource's are its store's, kernel/store.ts) are prepared once per connection and executed
 * with their values, without a query builder per request. On SQLite a read-only connection of
 * its own keeps its prepared statements (WAL: it reads beside the writer and sees every
 * commit); on MySQL, mysql2's `execute` on a connection of knex's pool, whose statement cache
 * prepares each text once per connection; on PostgreSQL, node-postgres's named statements,
 * each parsed once per connection. An in-memory SQLite database, which a second
 * connection cannot see, reads through knex.
 */
export interface Reads {
  all(sql: string, values: readonly unknown[]): Promise<Record<string, unknown>[]>;
  close(): void;
}

export function createReads(db: Knex, database: DatabaseConfig): Reads {
  if (database.client === 'mysql') {
    return { all: (sql, values) => withConnection(db, (connection: MysqlConnection) => mysqlCall(connection, sql, values)), close() {} };
  }
  if (database.client === 'postgres') {
    return { all: (sql, values) => withConnection(db, (connection: PgConnection) => pgCall(connection, sql, values)), close() {} };
  }
  if (database.filename === ':memory:') {
    return { all: async (sql, values) => (await db.raw(sql, values as Knex.RawBinding[])) as Record<string, unknown>[], close() {} };
  }
  let connection: Database.Database | undefined;
  const prepared = new Map<string, Database.Statement>();
  return {
    async all(sql, values) {
      // Opened at the first read: the file exists by then (start-up migrated it).
      connection ??= new Database(database.filename, { readonly: true, fileMustExist: true, timeout: 5000 });
      let statement = prepared.get(sql);
      if (!statement) {
        statement = connection.prepare(sql);
        prepared.set(sql, statement);
      }
      return statement.all(...values) as Record<string, unknown>[];
    },
    close() {
      connection?.close();
    },
  };
}
