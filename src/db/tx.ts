import type { Knex } from 'knex';
import { retryingDeadlocks } from './dialect.js';
import { dialectFor } from './dialects/index.js';
import { FUSABLE, fuse, together, type Statement } from './fused.js';
import { mysqlCall, mysqlStatements, pgCall, withConnection, type MysqlConnection, type PgConnection, type SqliteConnection } from './driver.js';
import { inCallersContext } from '../tracing/tracer.js';
import { DONE } from '../common/done.js';

/**
 * The resources' writes (create, update, delete, their events and idempotency keys) run by the
 * driver itself, in a transaction of their own making: statements that knex compiled once (see
 * db/prepared.ts and kernel/storage/store.ts) executed with their values on a connection taken from knex's pool, with
 * no query builder and no knex transaction per request (each costs more than the statement).
 *
 * SQLite: `BEGIN IMMEDIATE` takes the write lock first (a transaction that reads, then writes
 * after another process committed, would fail with SQLITE_BUSY_SNAPSHOT; one that starts with
 * the lock waits its turn), and the connection keeps its prepared statements (db/connect.ts).
 * MySQL: mysql2's `execute`, whose statement cache prepares each text once per connection; a
 * write's INSERTs go in one round trip with its COMMIT (see mysqlSession).
 * PostgreSQL: node-postgres's named statements, each text parsed once per connection; a
 * write's INSERTs go as one statement (see pgSession), a create's with no BEGIN and no COMMIT.
 * Both: retried on deadlock, and a connection lost at COMMIT is told apart (retryingDeadlocks).
 */
export interface Tx {
  /** The rows a statement returns. */
  all(sql: string, values: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /**
   * A statement that writes. On MySQL and PostgreSQL an INSERT is sent with the next statement or
   * the commit (its error, say a duplicate key, comes from there: out of writeTransaction all the same).
   */
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

/**
 * A server's transaction, begun by its first statement: `commit` says `committing` once the
 * outcome hangs on the server's answer (a connection lost after that is told apart, see
 * retryingDeadlocks).
 */
export interface ServerSession extends Tx {
  commit(committing: () => void): Promise<void>;
  rollback(): Promise<void>;
}

/**
 * SQLite's session. better-sqlite3 answers at once, so its answers are promises already settled:
 * a statement that returns nothing answers with one shared promise (DONE), and none is an async
 * function, which would make a promise of its own for each statement (with traces on, each
 * promise also passes through the hooks that carry the context: tracing/context.ts).
 */
function sqliteSession(connection: SqliteConnection): Session {
  const run = (sql: string, values: readonly unknown[] = []): Promise<void> => {
    try {
      connection.prepare(sql).run(...bind(values));
      return DONE;
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    all: (sql, values) => {
      try {
        return Promise.resolve(connection.prepare(sql).all(...bind(values)) as Record<string, unknown>[]);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    run,
    control: (sql) => run(sql === 'BEGIN' ? 'BEGIN IMMEDIATE' : sql),
  };
}

/**
 * MySQL: INSERTs wait, as on PostgreSQL (see pgSession), and go with what must follow them in one
 * round trip of several statements: `START TRANSACTION` when none was sent, the INSERTs, and the
 * `COMMIT` at the end. A create, INSERTs alone, is one round trip where there were five. Reads,
 * writes of other kinds and a batch's INSERTs (db/fused.ts) stay prepared statements (`execute`).
 */
export function mysqlSession(connection: MysqlConnection): ServerSession {
  let begun = false;
  let waiting: Statement[] = [];
  const send = async (last?: 'COMMIT') => {
    const statements = waiting;
    waiting = [];
    const start = !begun;
    begun = true;
    if (statements.length > 0 && together(statements)) {
      const texts = [...(start ? ['START TRANSACTION'] : []), ...statements.map((statement) => statement.sql), ...(last ? [last] : [])];
      await mysqlStatements(connection, texts.join(';\n'), statements.flatMap((statement) => statement.values));
      return;
    }
    // Nothing waiting, or a batch's INSERTs: each statement as it is.
    if (start) await mysqlCall(connection, 'START TRANSACTION');
    for (const statement of statements) await mysqlCall(connection, statement.sql, statement.values);
    if (last) await mysqlCall(connection, last);
  };
  return {
    all: async (sql, values) => {
      if (!begun || waiting.length > 0) await send();
      return mysqlCall(connection, sql, bind(values));
    },
    run: async (sql, values) => {
      if (FUSABLE.test(sql)) {
        waiting.push({ sql, values: bind(values) });
        return;
      }
      if (!begun || waiting.length > 0) await send();
      await mysqlCall(connection, sql, bind(values));
    },
    commit: async (committing) => {
      if (!begun && waiting.length === 0) return;
      committing();
      await send('COMMIT');
    },
    rollback: async () => {
      waiting = [];
      if (begun) await mysqlCall(connection, 'ROLLBACK');
    },
  };
}

/**
 * PostgreSQL: INSERTs wait, and go as one statement (db/fused.ts) when something must see them
 * (a read, another kind of write) or at the commit; BEGIN waits for the first statement sent.
 * A write made of INSERTs alone (a create) is then one statement, which commits on its own:
 * one round trip where BEGIN, each INSERT and COMMIT took one each.
 */
export function pgSession(connection: PgConnection): ServerSession {
  let begun = false;
  let waiting: Statement[] = [];
  /** The INSERTs waiting, as few statements as they fuse into (none wait after). */
  const taken = () => {
    const statements = fuse(waiting);
    waiting = [];
    return statements;
  };
  /** BEGIN unless it was sent, then `statements`. */
  const send = async (statements: readonly Statement[]) => {
    if (!begun) await pgCall(connection, 'BEGIN');
    begun = true;
    for (const statement of statements) await pgCall(connection, statement.sql, statement.values);
  };
  return {
    all: async (sql, values) => {
      await send(taken());
      return pgCall(connection, sql, bind(values));
    },
    run: async (sql, values) => {
      if (FUSABLE.test(sql)) {
        waiting.push({ sql, values: bind(values) });
        return;
      }
      await send([...taken(), { sql, values: bind(values) }]);
    },
    commit: async (committing) => {
      const statements = taken();
      if (!begun && statements.length === 0) return;
      const [alone] = statements;
      if (!begun && alone && statements.length === 1) {
        // One statement commits on its own.
        committing();
        await pgCall(connection, alone.sql, alone.values);
        return;
      }
      await send(statements);
      committing();
      await pgCall(connection, 'COMMIT');
    },
    rollback: async () => {
      waiting = [];
      if (begun) await pgCall(connection, 'ROLLBACK');
    },
  };
}

/**
 * Runs `work` in a write transaction on one of knex's connections; `work` must touch nothing but
 * the database (it may run again). On SQLite the writes that arrive together commit together
 * (see groupCommit); on MySQL and PostgreSQL in a session of their own (sessionTransaction).
 */
export function writeTransaction<T>(db: Knex, work: (tx: Tx) => Promise<T>): Promise<T> {
  return dialectFor(db).writeTransaction(db, work);
}

/** A server's write transaction: `work` in a session `open` makes on a connection, committed, retried on deadlock. */
export function sessionTransaction<T, C>(db: Knex, work: (tx: Tx) => Promise<T>, open: (connection: C) => ServerSession): Promise<T> {
  return retryingDeadlocks((committing) =>
    withConnection(db, async (connection: C) => {
      const session = open(connection);
      // Each session begins with its first statement (see mysqlSession, pgSession).
      try {
        const result = await work(session);
        await session.commit(committing);
        return result;
      } catch (error) {
        // Nothing to roll back once the connection is lost (knex's pool then drops it) or the
        // COMMIT went through: the error that got here is the one to report.
        await session.rollback().catch(() => undefined);
        throw error;
      }
    }),
  );
}

/** A write waiting for its group: its work, and how to answer the caller. */
interface Waiting {
  work: (tx: Tx) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** The writes an SQLite database has waiting, and whether a group is under way. */
interface Line {
  waiting: Waiting[];
  running: boolean;
}

/** Writes one SQLite transaction takes at most. */
const GROUP_LIMIT = 32;

const lines = new WeakMap<Knex, Line>();

/**
 * SQLite's group commit. Committing costs more than the statements of a write (each commit
 * appends every page it changed to the WAL), and SQLite has one writer at a time: the writes
 * that arrived in one turn of the event loop run one after another in one transaction
 * (BEGIN IMMEDIATE ... COMMIT), and each caller is answered once that COMMIT is done, as if its
 * write had committed alone. Nothing waits for a group to fill: a write alone starts on the
 * next turn of the loop. When a write of a group fails, the group is rolled back and each of
 * its writes runs again in a transaction of its own (its failure may have come from another's
 * uncommitted rows: two creates with one Idempotency-Key), so each runs at most twice and
 * answers as it would have alone.
 */
export function groupCommit<T>(db: Knex, work: (tx: Tx) => Promise<T>): Promise<T> {
  let line = lines.get(db);
  if (!line) lines.set(db, (line = { waiting: [], running: false }));
  const queue = line;
  return new Promise<T>((resolve, reject) => {
    queue.waiting.push({ work: inCallersContext(work), resolve: resolve as (value: unknown) => void, reject });
    if (!queue.running) {
      queue.running = true;
      setImmediate(() => void drain(db, queue));
    }
  });
}

async function drain(db: Knex, line: Line): Promise<void> {
  try {
    while (line.waiting.length > 0) {
      const group = line.waiting.splice(0, GROUP_LIMIT);
      try {
        await withConnection(db, async (connection: SqliteConnection) => {
          const session = sqliteSession(connection);
          if (!(await commitGroup(session, group))) for (const alone of group) await commitGroup(session, [alone]);
        });
      } catch (error) {
        // No connection, or no BEGIN: the writes not yet answered are answered with why.
        for (const waiting of group) waiting.reject(error);
      }
    }
  } finally {
    line.running = false;
  }
}

/**
 * One transaction for `group`: true once all committed and are answered. A write that fails
 * rolls the transaction back; alone, it is answered with its error (true); in a group, nothing
 * is answered (false) and the writes are to run again one by one.
 */
async function commitGroup(session: Session, group: Waiting[]): Promise<boolean> {
  await session.control('BEGIN');
  const results: unknown[] = [];
  let failed: { error: unknown } | undefined;
  for (const waiting of group) {
    try {
      results.push(await waiting.work(session));
    } catch (error) {
      failed = { error };
      break;
    }
  }
  if (!failed) {
    try {
      await session.control('COMMIT');
    } catch (error) {
      failed = { error };
    }
  }
  if (failed) {
    await session.control('ROLLBACK').catch(() => undefined);
    if (group.length > 1) return false;
    group[0]?.reject(failed.error);
    return true;
  }
  for (const [i, waiting] of group.entries()) waiting.resolve(results[i]);
  return true;
}
