import { claimFirst, knexTransaction, loweredAmong, type Dialect } from '../dialect.js';
import { numbered, pgCall, withConnection, type PgConnection } from '../driver.js';
import { driverReads } from '../reads.js';
import { pgSession, sessionTransaction } from '../tx.js';

/** PostgreSQL (node-postgres). */
export const postgres: Dialect = {
  name: 'postgres',
  fanOutBatch: 500,
  lineRecordWaitMs: 10,
  termsByObject: true,
  notifies: true,
  driverText: numbered,
  insertIgnoring: (insert) => `${insert} ON CONFLICT DO NOTHING`,
  insertAdding: (insert, table, key, counters) => `${insert} ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${counters.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', ')}`,
  textExactly: () => undefined,
  /** PostgreSQL indexes `lower(field)` itself (kernel/storage/migration-text.ts). */
  caselessAmong: loweredAmong,
  keysetSource: (_db, table) => table,
  indexedBy: (_db, table) => table,
  /** Searched rows by their matches: drivenBy's form is what keeps the planner off the keyset index. */
  drivenByTerms: (db, table, workspaceId) => db.from(table).where('workspace_id', workspaceId),
  /**
   * Given a semi-join, PostgreSQL plans it by walking the list's keyset index and checking each
   * row, assuming the matches spread evenly along it: when they sit at its far end, a first page
   * walked 97,000 rows (300 ms). As an array computed first (`= ANY(ARRAY(...))`), the matches
   * are looked up by primary key and sorted (12 ms for 1,111 of 110,000).
   */
  drivenBy: (q, column, matches) => q.whereRaw('?? = ANY(ARRAY(?))', [column, matches]),
  indexNames: async (db, table) => {
    const { rows } = (await db.raw('SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ?', [table])) as { rows: Array<{ indexname: string }> };
    return new Set(rows.map((r) => r.indexname));
  },
  /**
   * One UPDATE over a subquery that locks the first claimable rows (FOR UPDATE SKIP LOCKED: rows
   * another claim holds are passed over), RETURNING the keys it took; its row locks take no
   * index locks, so there is no second lock order to keep.
   */
  claimRows: (trx, spec) => claimFirst(trx, spec, (first) => first.forUpdate().skipLocked()),
  /**
   * One DELETE of the keys a subquery locks (the first entries, FOR UPDATE SKIP LOCKED),
   * RETURNING them. `= ANY(ARRAY(...))`: the entries taken are found by their key, where
   * `IN (subquery)` was planned as a hash join over the whole table, rows deleted and not yet
   * vacuumed included.
   */
  takeQueued: async (trx, spec) => {
    const returning = `RETURNING ${spec.columns.map(() => '??').join(', ')}`;
    const sql = `DELETE FROM ?? WHERE ?? = ANY(ARRAY(SELECT ?? FROM ?? ORDER BY ?? LIMIT ? FOR UPDATE SKIP LOCKED)) ${returning}`;
    const result = (await trx.raw(sql, [spec.table, spec.key, spec.key, spec.table, spec.key, spec.limit, ...spec.columns])) as { rows: Record<string, unknown>[] };
    return result.rows;
  },
  /**
   * The groups as rows of a JSON document, each joined LATERAL to its one-probe subquery: one
   * short text whatever their count. As a UNION ALL of a probe a group, PostgreSQL took 9 ms to
   * plan 100 of them (0.1 ms so), on every record of a per_object worker.
   */
  firstOfGroups: async (db, spec) => {
    if (spec.groups.length === 0) return [];
    const keys = spec.by.map((_, i) => `k${i}`);
    const sql = `SELECT f.* FROM jsonb_to_recordset(?::jsonb) AS g(${keys.map((k) => `${k} text`).join(', ')}) CROSS JOIN LATERAL (SELECT ${spec.columns.map(() => '??').join(', ')} FROM ?? WHERE ${keys.map((k) => `?? = g.${k}`).join(' AND ')} AND ?? IS NOT NULL ORDER BY ?? LIMIT 1) AS f`;
    const groups = JSON.stringify(spec.groups.map((group) => Object.fromEntries(keys.map((k, i) => [k, group[i]]))));
    const { rows } = (await db.raw(sql, [groups, ...spec.columns, spec.table, ...spec.by, spec.order, spec.order])) as { rows: Record<string, unknown>[] };
    return rows;
  },
  transaction: (db, work) => knexTransaction(db, work),
  writeTransaction: (db, work) => sessionTransaction(db, work, pgSession),
  reads: (db) => driverReads((sql, values) => withConnection(db, (connection: PgConnection) => pgCall(connection, sql, values))),
};
