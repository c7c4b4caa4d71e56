import type { Knex } from 'knex';
import { keysetSource } from '../db/tables.js';
import type { SortField } from './define.js';
import { afterKeyset } from './keyset.js';
import type { CompiledResource } from './registry.js';

/**
 * The statements of the hot path, compiled by knex once per resource and shape (then only
 * their values change): a page of the unfiltered list, first or past a cursor, in each sort
 * order; one object by id; and the writes (db/tx.ts runs them). Compiling with marker values
 * and checking that they come back in the expected order pins the order of the values passed
 * at run time; a write's columns come back in the order knex put them, and its values follow.
 */
export interface Statement {
  sql: string;
}

/** A write of named columns: its values are `columns` in this order, then any markers' values. */
export interface WriteStatement extends Statement {
  columns: readonly string[];
}

const compiled = new WeakMap<Knex, Map<string, WriteStatement>>();

type Compiled = { sql: string; bindings: readonly unknown[] };

/**
 * The statement under `key`, compiled at its first use. `columns`: a write's columns, given
 * as their own values, which come back first in knex's order; `markers`: the other values.
 */
function once(db: Knex, key: string, build: () => Compiled, markers: readonly unknown[], columns: readonly string[] = []): WriteStatement {
  let cache = compiled.get(db);
  if (!cache) compiled.set(db, (cache = new Map()));
  let statement = cache.get(key);
  if (!statement) {
    const { sql, bindings } = build();
    const order = bindings.slice(0, columns.length) as string[];
    const sameColumns = [...order].sort().join() === [...columns].sort().join();
    if (!sameColumns || JSON.stringify(bindings.slice(columns.length)) !== JSON.stringify(markers)) {
      throw new Error(`statement ${key}: its values compile in an unexpected order (${JSON.stringify(bindings)})`);
    }
    statement = { sql, columns: order };
    cache.set(key, statement);
  }
  return statement;
}

const itself = (columns: readonly string[]) => Object.fromEntries(columns.map((c) => [c, c]));

/** One row into `table`: values `columns`, in the statement's order (`values(statement, row)`). */
export function insertStatement(db: Knex, table: string, columns: readonly string[]): WriteStatement {
  return once(db, `insert:${table}:${columns.join(',')}`, () => db(table).insert(itself(columns)).toSQL().toNative(), [], columns);
}

/** The values of `row` for a write statement, in its order, then `more`. */
export function values(statement: WriteStatement, row: object, ...more: unknown[]): unknown[] {
  return [...statement.columns.map((c) => (row as Record<string, unknown>)[c]), ...more];
}

/** A resource's stored row: columns `id`, `workspace_id`, its fields and its times. */
export function createStatement(db: Knex, resource: CompiledResource): WriteStatement {
  const [id, ...rest] = resource.columns;
  return insertStatement(db, resource.def.table, [id as string, 'workspace_id', ...rest]);
}

/** Every field and `updated_at` of one object: values(statement, row, workspace_id, id). */
export function updateStatement(db: Knex, resource: CompiledResource): WriteStatement {
  const { table } = resource.def;
  const columns = [...Object.keys(resource.def.fields), 'updated_at'];
  return once(db, `update:${table}`, () => db(table).update(itself(columns)).where('workspace_id', 'w').andWhere('id', 'i').toSQL().toNative(), ['w', 'i'], columns);
}

/** One object out: values [workspace_id, id]. */
export function deleteStatement(db: Knex, resource: CompiledResource): Statement {
  const { table } = resource.def;
  return once(db, `delete:${table}`, () => db(table).where('workspace_id', 'w').andWhere('id', 'i').delete().toSQL().toNative(), ['w', 'i']);
}

/** One object, locked until the transaction ends (MySQL; SQLite's writer holds the only lock): values [workspace_id, id]. */
export function lockedObjectStatement(db: Knex, resource: CompiledResource): Statement {
  const { table } = resource.def;
  return once(db, `locked:${table}`, () => db(table).select(resource.columns).where('workspace_id', 'w').andWhere('id', 'i').forUpdate().toSQL().toNative(), ['w', 'i']);
}

/** Whether an object exists, share-locked until the transaction ends: values [workspace_id, id]. */
export function referenceStatement(db: Knex, table: string): Statement {
  return once(db, `reference:${table}`, () => db(table).select('id').where('workspace_id', 'w').andWhere('id', 'i').forShare().toSQL().toNative(), ['w', 'i']);
}

/** Rows of `table` whose workspace and key are these and whose `column` is at most a value: values [workspace_id, key, bound]. */
export function deleteAtMostStatement(db: Knex, table: string, key: string, column: string): Statement {
  return once(db, `delete-at-most:${table}:${key}:${column}`, () => db(table).where('workspace_id', 'w').andWhere(key, 'k').andWhere(column, '<=', -1).delete().toSQL().toNative(), ['w', 'k', -1]);
}

/** A list page: values [workspace_id, limit] first, [workspace_id, value, value, id, limit] past a cursor. */
export function pageStatement(db: Knex, resource: CompiledResource, column: SortField, order: 'asc' | 'desc', pastCursor: boolean): Statement {
  const { table } = resource.def;
  const markers = pastCursor ? ['w', -1, -1, 'i', 2] : ['w', 2];
  return once(
    db,
    `page:${table}:${column}:${order}:${pastCursor}`,
    () => {
      // Past a cursor, the sort's keyset index (MariaDB would otherwise walk every row before it).
      const q = db.from(pastCursor ? keysetSource(db, table, column) : table).where('workspace_id', 'w');
      if (pastCursor) afterKeyset(q, column, order, { value: -1, id: 'i' });
      return q.orderBy([{ column, order }, { column: 'id', order }]).limit(2).select(resource.columns).toSQL().toNative();
    },
    markers,
  );
}

/** One object: values [workspace_id, id]. */
export function objectStatement(db: Knex, resource: CompiledResource): Statement {
  const { table } = resource.def;
  return once(db, `object:${table}`, () => db(table).select(resource.columns).where('workspace_id', 'w').andWhere('id', 'i').toSQL().toNative(), ['w', 'i']);
}
