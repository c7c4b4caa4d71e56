import type { Knex } from 'knex';
import { knexTransaction, loweredAmong, type ClaimSpec, type Dialect, type FirstSpec, type TakeSpec } from '../dialect.js';
import { mysqlCall, withConnection, type MysqlConnection } from '../driver.js';
import { driverReads } from '../reads.js';
import { keysetIndex } from '../tables.js';
import { mysqlSession, sessionTransaction } from '../tx.js';

/**
 * The collation a caseless column (an email) has on MySQL: utf8mb4's that ignores letter case
 * in MariaDB and MySQL 8 alike (npm run migrate:make gives it to such a column).
 */
export const CASELESS_COLLATION = 'utf8mb4_general_ci';

/**
 * How a migration written by migrate:make tells MySQL apart (kernel/storage/migration-text.ts):
 * its text stands alone, importing nothing of src/, so it says this itself.
 */
export const MYSQL_IN_MIGRATION = "knex.client.config.client === 'mysql2'";

/** How many of the first claimable rows a MySQL claim picks its `limit` from, at random. */
const CLAIM_WINDOW = 3;

/** MySQL and MariaDB (mysql2). */
export const mysql: Dialect = {
  name: 'mysql',
  fanOutBatch: 500,
  lineRecordWaitMs: 10,
  termsByObject: true,
  notifies: false,
  driverText: (sql) => sql,
  insertIgnoring: (insert) => insert.replace(/^INSERT/, 'INSERT IGNORE'),
  insertAdding: (insert, _table, _key, counters) => `${insert} ON DUPLICATE KEY UPDATE ${counters.map((c) => `${c} = ${c} + VALUES(${c})`).join(', ')}`,

  /**
   * MySQL's collation ignores letter case, accents and trailing spaces: the column is compared
   * once more as bytes, after its index has found the candidates.
   */
  textExactly: (q, field, values) => void q.whereRaw(`cast(?? as binary) in (${values.map(() => '?').join(', ')})`, [field, ...values]),
  /**
   * `lower(field)` compared with each value in lower case, as everywhere; MySQL has no index on
   * `lower(field)` before 8.0.13 and none on MariaDB, so the column is indexed under
   * CASELESS_COLLATION and the values are first compared in that collation (the index narrows;
   * a column of another collation is still compared right, only not by its index).
   */
  caselessAmong: (q, field, values) => {
    q.whereRaw(`?? in (${values.map(() => `? collate ${CASELESS_COLLATION}`).join(', ')})`, [field, ...values.map((v) => v.toLowerCase())]);
    loweredAmong(q, field, values);
  },

  /**
   * MariaDB, given the whole row to fetch, plans the workspace's rows by `ref` and filters every
   * row before the cursor (a page 100,000 deep took 200 ms); told to use the sort's keyset index
   * it seeks to the cursor (under 1 ms).
   */
  keysetSource: (db, table, index) => db.raw('?? FORCE INDEX (??)', [table, index]),
  indexedBy: (_db, table) => table,
  /** Searched rows by their matches: the keyset indexes left out, which MariaDB would walk to skip the sort. */
  drivenByTerms: (db, table, workspaceId) => db.from(db.raw('?? IGNORE INDEX (??, ??)', [table, keysetIndex(table, 'created_at'), keysetIndex(table, 'updated_at')])).where('workspace_id', workspaceId),
  drivenBy: (q, column, matches) => q.whereIn(column, matches),
  indexNames: async (db, table) => {
    const [rows] = (await db.raw('SHOW INDEX FROM ??', [table])) as [Array<{ Key_name: string }>];
    return new Set(rows.map((r) => r.Key_name));
  },

  /**
   * The candidates are read without locks; then those still claimable are locked by primary key
   * (FOR UPDATE SKIP LOCKED, forced onto the primary key) and updated by key. A locking read
   * over the secondary index would lock the index before the row, the reverse of what every
   * UPDATE by key of the same rows does (recording an attempt, another claim), and MariaDB
   * deadlocks the two; by key, in ascending order, there is one lock order everywhere. Each
   * claim picks its rows at random among the first few claimable ones, so that workers claiming
   * at once rarely want the same rows.
   */
  claimRows: async (trx, spec) => {
    const locked = (await lockByKey(trx, spec, [spec.key])).map((r) => String(r[spec.key]));
    if (locked.length > 0) await trx(spec.table).whereIn(spec.key, locked).update(spec.set);
    return locked;
  },
  /**
   * As claimRows, the candidates read without locks, some picked at random, locked by primary
   * key (SKIP LOCKED) and read, then deleted a statement a key, in one round trip: over a small
   * table MariaDB plans `DELETE ... WHERE key IN (...)` as a scan, which waits on the entries
   * other workers hold, and two of them deadlock; `key = ?` reads its one row.
   */
  takeQueued: async (trx, spec) => {
    const taken = await lockByKey(trx, { ...spec, claimable: (q) => q, order: spec.key }, spec.columns);
    if (taken.length > 0) await trx.raw(taken.map(() => 'DELETE FROM ?? WHERE ?? = ?').join(';\n'), taken.flatMap((row) => [spec.table, spec.key, String(row[spec.key])]));
    return taken;
  },
  firstOfGroups: firstByProbes,
  transaction: (db, work) => knexTransaction(db, work),
  writeTransaction: (db, work) => sessionTransaction(db, work, mysqlSession),
  reads: (db) => driverReads((sql, values) => withConnection(db, (connection: MysqlConnection) => mysqlCall(connection, sql, values))),
};

/**
 * A claim's first step: up to `limit` of the first claimable rows (picked at random among
 * CLAIM_WINDOW times as many, read without locks), locked by primary key in ascending order
 * (FOR UPDATE SKIP LOCKED, forced onto the primary key), with their `columns`.
 */
async function lockByKey(trx: Knex.Transaction, spec: Omit<ClaimSpec, 'set'> | (TakeSpec & Pick<ClaimSpec, 'claimable' | 'order'>), columns: readonly string[]): Promise<Record<string, unknown>[]> {
  const candidates = ((await spec.claimable(trx(spec.table).select(spec.key)).orderBy(spec.order).limit(spec.limit * CLAIM_WINDOW)) as Record<string, unknown>[]).map((r) => String(r[spec.key]));
  const wanted = pick(candidates, spec.limit).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (wanted.length === 0) return [];
  const byKey = trx.raw('?? FORCE INDEX (PRIMARY)', [spec.table]);
  return (await spec.claimable(trx.select(columns).from(byKey).whereIn(spec.key, wanted)).forUpdate().skipLocked()) as Record<string, unknown>[];
}

/** Up to `n` of `items`, chosen at random (all of them, in order, when there are no more than `n`). */
function pick<T>(items: T[], n: number): T[] {
  if (items.length <= n) return items;
  const copy = [...items];
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy.slice(0, n);
}

/** firstByProbes' texts: a probe per shape of FirstSpec, the UNION per count of groups. */
const probeTexts = new Map<string, string>();

/**
 * firstOfGroups as one probe a group (MariaDB has no LATERAL join, and, given the groups as a
 * JSON_TABLE, searched each one's rows by `ref`, reading its done rows too), the probes joined by
 * UNION ALL in parentheses: as many subqueries, each a derived table, took twice as long to plan
 * and run (20 probes, 1.55 ms against 0.85). The probe is compiled by knex once, the text once
 * per count of groups.
 */
async function firstByProbes(db: Knex | Knex.Transaction, spec: FirstSpec): Promise<Record<string, unknown>[]> {
  if (spec.groups.length === 0) return [];
  const shape = JSON.stringify([spec.table, spec.by, spec.order, spec.columns]);
  const id = `${shape}${spec.groups.length}`;
  let text = probeTexts.get(id);
  if (text === undefined) {
    let probe = probeTexts.get(shape);
    if (probe === undefined) {
      const marker = (i: number) => `\u0000${i}`;
      const q = db(spec.table).select(...spec.columns);
      spec.by.forEach((column, i) => q.where(column, marker(i)));
      const { sql, bindings } = q.whereNotNull(spec.order).orderBy(spec.order).limit(1).toSQL();
      // A probe's values go in the order of `by`, then its limit (knex writes LIMIT as a value): say so if a knex ever wrote them otherwise.
      if (bindings.length !== spec.by.length + 1 || bindings.some((b, i) => (i === spec.by.length ? b !== 1 : b !== marker(i)))) throw new Error(`unexpected values in a probe of firstByProbes: ${sql}`);
      probeTexts.set(shape, (probe = sql));
    }
    probeTexts.set(id, (text = Array.from({ length: spec.groups.length }, () => `(${probe})`).join(' union all ')));
  }
  return (await db.select('*').from(db.raw(`(${text}) as firsts`, spec.groups.flatMap((group) => [...group, 1])))) as Record<string, unknown>[];
}
