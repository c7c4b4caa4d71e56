import type { Knex } from 'knex';
import { claimFirst, knexTransaction, loweredAmong, type Dialect } from '../dialect.js';
import { sqliteReads } from '../reads.js';
import { groupCommit } from '../tx.js';

/** SQLite (better-sqlite3): one writer, no row locks, answers synchronously. */
export const sqlite: Dialect = {
  name: 'sqlite',
  /**
   * Every statement runs on the event loop (better-sqlite3 is synchronous), and the inline worker
   * shares that loop with the API: 40 keeps a fan-out to a few milliseconds (with 100 and the
   * claim in the same turn, /v1/health's p99 was 36 ms while 50,000 events were fanned out,
   * against 26 ms; bench:backlog). MySQL's and PostgreSQL's statements do not hold the loop: 500.
   */
  fanOutBatch: 40,
  lineRecordWaitMs: 3,
  termsByObject: false,
  notifies: false,
  driverText: (sql) => sql,
  insertIgnoring: (insert) => insert.replace(/^INSERT/, 'INSERT OR IGNORE'),
  insertAdding: (insert, table, key, counters) => `${insert} ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${counters.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', ')}`,
  textExactly: () => undefined,
  /** SQLite indexes `lower(field)` itself (kernel/storage/migration-text.ts). */
  caselessAmong: loweredAmong,
  keysetSource: (_db, table) => table,
  /**
   * SQLite's planner knows nothing of the rows (the service runs no ANALYZE) and, given a page
   * to fetch whole, walks the primary key instead of an index that finds far fewer rows.
   */
  indexedBy: (db, table, index) => db.raw('?? INDEXED BY ??', [table, index]),
  /** Searched rows by their matches: `+` keeps the workspace's condition off every index, which SQLite would walk to skip the sort. */
  drivenByTerms: (db, table, workspaceId) => db.from(table).whereRaw('+?? = ?', ['workspace_id', workspaceId]),
  drivenBy: (q, column, matches) => q.whereIn(column, matches),
  indexNames: async (db, table) => new Set(((await db.raw('SELECT name FROM pragma_index_list(?)', [table])) as Array<{ name: string }>).map((r) => r.name)),
  /** The same UPDATE as PostgreSQL's without the locking clause, whose write lock serialises the rest of the transaction. */
  claimRows: (trx, spec) => claimFirst(trx, spec, (first) => first),
  /** One DELETE of the first entries (one writer, no row locks); knex's DELETE answers a count, not the rows, so RETURNING is added to its text. */
  takeQueued: async (trx, spec) => {
    const returning = `RETURNING ${spec.columns.map(() => '??').join(', ')}`;
    const first = trx(spec.table).select(spec.key).orderBy(spec.key).limit(spec.limit);
    const { sql, bindings } = trx(spec.table).whereIn(spec.key, first).delete().toSQL();
    return (await trx.raw(`${sql} ${returning}`, [...bindings, ...spec.columns])) as Record<string, unknown>[];
  },
  /**
   * The groups as the rows of a JSON array, each finding its first row's rowid by a correlated
   * subquery (one search of the (...by, order) index), and the row by its rowid: one short text
   * whatever their count. A UNION ALL of one probe a group (each a subquery SQLite runs apart)
   * took 477 us to prepare and run for 20 groups, this 62 (1,000 deliveries on 20 lines). The
   * table must have a rowid: not one made WITHOUT ROWID (search_terms, events_pending, key_requests).
   */
  firstOfGroups: async (db, spec) => {
    if (spec.groups.length === 0) return [];
    const matches = spec.by.map((_, i) => `x.?? = json_extract(g.value, '$[${i}]')`).join(' AND ');
    const sql = `SELECT ${spec.columns.map(() => 'd.??').join(', ')} FROM json_each(?) AS g JOIN ?? AS d ON d.rowid = (SELECT x.rowid FROM ?? AS x WHERE ${matches} AND x.?? IS NOT NULL ORDER BY x.?? LIMIT 1)`;
    return (await db.raw(sql, [...spec.columns, JSON.stringify(spec.groups), spec.table, spec.table, ...spec.by, spec.order, spec.order])) as Record<string, unknown>[];
  },
  // SQLite: take the write lock first, as BEGIN IMMEDIATE would (knex only says BEGIN). A
  // transaction that reads, then writes after another process committed, fails with
  // SQLITE_BUSY_SNAPSHOT at once; one that starts with a write waits its turn instead.
  transaction: (db, work) => inTurn(db, () => knexTransaction(db, work, (trx) => trx.raw('UPDATE workspaces SET id = id WHERE 0'))),
  writeTransaction: groupCommit,
  reads: sqliteReads,
};

/** Each SQLite database's last transaction in line (see inTurn). */
const lastInLine = new WeakMap<Knex, Promise<void>>();

/**
 * SQLite answers synchronously, so a transaction runs start to end in one turn of the event
 * loop, and one waiting for the connection would start in the same turn, as the first one's
 * promise settles: the worker's transactions, one after another, held the loop 80 ms while
 * requests waited. In line instead, each one starting on a turn of its own.
 */
async function inTurn<T>(db: Knex, run: () => Promise<T>): Promise<T> {
  const previous = lastInLine.get(db) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  lastInLine.set(db, previous.then(() => mine));
  await previous;
  await new Promise((resolve) => setImmediate(resolve));
  try {
    return await run();
  } finally {
    done();
  }
}
