import type { Knex } from 'knex';
import { keysetSource } from '../db/tables.js';
import type { SortField } from './define.js';
import { afterKeyset } from './keyset.js';
import type { CompiledResource } from './registry.js';

/**
 * The statements of the hot path, compiled by knex once per resource and shape (then only
 * their values change): a page of the unfiltered list, first or past a cursor, in each sort
 * order; and one object by id. Compiling with marker values and checking that they come back
 * in the expected order pins the order of the values passed at run time.
 */
export interface Statement {
  sql: string;
}

const compiled = new WeakMap<Knex, Map<string, Statement>>();

function once(db: Knex, key: string, build: () => { sql: string; bindings: readonly unknown[] }, markers: readonly unknown[]): Statement {
  let cache = compiled.get(db);
  if (!cache) compiled.set(db, (cache = new Map()));
  let statement = cache.get(key);
  if (!statement) {
    const { sql, bindings } = build();
    if (JSON.stringify(bindings) !== JSON.stringify(markers)) throw new Error(`statement ${key}: its values compile in an unexpected order (${JSON.stringify(bindings)})`);
    statement = { sql };
    cache.set(key, statement);
  }
  return statement;
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
