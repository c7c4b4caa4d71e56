import { LRUCache } from 'lru-cache';
import fs from 'node:fs';
import path from 'node:path';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '../common/config.js';
import { CHECKPOINT_BACKSTOP_PAGES, LOG_SIZE_LIMIT_BYTES, startCheckpointer } from './checkpoint.js';

/** Statements one SQLite connection keeps prepared (texts beyond are prepared as they come). */
const KEPT_STATEMENTS = 500;

/**
 * knex asks better-sqlite3 to prepare every statement it runs, each time; the texts repeat
 * (the same insert, the same lookup), so the connection keeps what it prepared, by text. A
 * kept statement is reused only after its last run has returned: knex runs them synchronously.
 */
function keepStatements(conn: { prepare(sql: string): unknown }): void {
  const prepare = conn.prepare.bind(conn);
  const kept = new LRUCache<string, object>({ max: KEPT_STATEMENTS });
  conn.prepare = (sql: string) => {
    let statement = kept.get(sql);
    if (statement === undefined) {
      statement = prepare(sql) as object;
      kept.set(sql, statement);
    }
    return statement;
  };
}

// PostgreSQL's bigint (int8, also what COUNT answers) and numeric (what SUM of a bigint answers)
// arrive as text, for want of a JavaScript type that holds every value: this service's are
// milliseconds, amounts in minor units and counts, all within a double's exact integers.
pg.types.setTypeParser(pg.types.builtins.INT8, Number);
pg.types.setTypeParser(pg.types.builtins.NUMERIC, Number);

/** The parts of a mysql:// or postgres:// URL a driver takes. */
export function serverConnection(url: string, defaultPort: number) {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : defaultPort,
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.slice(1)),
  };
}

/** Knex settings for each backend; the only place that knows how each is opened. */
export function knexSettings(database: DatabaseConfig): Knex.Config {
  if (database.client === 'sqlite') {
    return {
      client: 'better-sqlite3',
      connection: { filename: database.filename },
      useNullAsDefault: true,
      // SQLite has one writer at a time: one connection per process, WAL so readers never block it.
      pool: {
        min: 1,
        max: 1,
        afterCreate(conn: { pragma(sql: string): unknown; prepare(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
          conn.pragma('journal_mode = WAL');
          conn.pragma('busy_timeout = 5000');
          conn.pragma('foreign_keys = ON');
          // Checkpoints are a thread's (db/checkpoint.ts); the writer's own is only a backstop.
          conn.pragma(`wal_autocheckpoint = ${CHECKPOINT_BACKSTOP_PAGES}`);
          conn.pragma(`journal_size_limit = ${LOG_SIZE_LIMIT_BYTES}`);
          // Temporary files in memory, above all the statement journal of a multi-row INSERT in a
          // transaction (the original of each page it changes, kept to undo that statement alone),
          // which SQLite writes to a file past 64 KiB: a batch of 100 deals made 375 of its 965
          // pwrite calls there. In memory: 543 calls, its INSERTs 4.3-4.6 -> 3.2-3.6 ms.
          conn.pragma('temp_store = MEMORY');
          keepStatements(conn);
          done(null, conn);
        },
      },
    };
  }
  if (database.client === 'postgres') {
    return {
      client: 'pg',
      // READ COMMITTED is PostgreSQL's default: claims (FOR UPDATE SKIP LOCKED) lock only the rows they take.
      connection: { ...serverConnection(database.url, 5432), connectionTimeoutMillis: 5000, application_name: 'workspace-api' },
      pool: { min: 0, max: 10 },
      acquireConnectionTimeout: 5000,
    };
  }
  return {
    client: 'mysql2',
    connection: {
      ...serverConnection(database.url, 3306),
      charset: 'utf8mb4',
      connectTimeout: 5000,
      // A write's INSERTs and its COMMIT go in one round trip (db/tx.ts). Every statement of the
      // service is built with placeholders (knex's, or compiled once: db/prepared.ts), none by
      // pasting a value into its text, so one more statement cannot ride in on a value.
      multipleStatements: true,
    },
    pool: {
      min: 0,
      max: 10,
      // READ COMMITTED: locking reads lock the rows they return and no gaps, so claiming queued
      // work (FOR UPDATE SKIP LOCKED) never blocks writers inserting new rows behind it.
      afterCreate(conn: { query(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) {
        conn.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED', (err) => done(err, conn));
      },
    },
    acquireConnectionTimeout: 5000,
  };
}

/** A knex message's first line: the rest is a stack. */
const firstLine = (message: unknown) => String(message).split('\n', 1)[0] ?? '';

/**
 * knex prints its own warnings to the console unless given a logger: send them to ours, one
 * line each. "Acquire connection error" repeats, with a stack, the error the caller gets and
 * logs in its own words ("database unavailable"), so it is said at debug level only.
 */
function knexLog(log: Logger): Knex.Config['log'] {
  return {
    warn: (message: unknown) => {
      const text = firstLine(message);
      if (text.startsWith('Acquire connection error')) log.debug({ knex: text }, 'knex warning');
      else log.warn({ knex: text }, 'knex warning');
    },
    error: (message: unknown) => log.error({ knex: firstLine(message) }, 'knex error'),
    deprecate: (message: unknown) => log.warn({ knex: firstLine(message) }, 'knex deprecation'),
    debug: (message: unknown) => log.debug({ knex: firstLine(message) }, 'knex debug'),
  };
}

export function createDb(database: DatabaseConfig, log?: Logger): Knex {
  if (database.client === 'sqlite' && database.filename !== ':memory:') {
    fs.mkdirSync(path.dirname(database.filename), { recursive: true });
  }
  // compileSqlOnError: an error's message carries the statement with ? for its values, never the values.
  const db = knex({ ...knexSettings(database), compileSqlOnError: false, ...(log ? { log: knexLog(log) } : {}) });
  if (database.client === 'sqlite' && database.filename !== ':memory:') {
    // A SQLite file's log is checkpointed by a thread of its own, stopped with the pool.
    const checkpointer = startCheckpointer(database.filename, (message) => log?.warn({ error: message }, 'SQLite checkpoint failed; the writer checkpoints on its own past its backstop'));
    const destroy = db.destroy.bind(db);
    Object.defineProperty(db, 'destroy', {
      configurable: true,
      value: async () => {
        await checkpointer.close();
        await destroy();
      },
    });
  }
  return db;
}
