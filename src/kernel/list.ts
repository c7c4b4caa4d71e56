import type { Knex } from 'knex';
import { decodeCursor } from './cursor.js';
import type { Reads } from '../db/reads.js';
import type { Row, SortField } from './define.js';
import { keysetPage, toPage } from './keyset.js';
import type { CompiledResource } from './registry.js';
import { toObject } from './rows.js';
import { pageStatement } from './statements.js';

export interface ListQuery {
  limit: number;
  sort: string;
  cursor?: string;
  updated_since?: string;
  [filter: string]: unknown;
}

/**
 * One page by keyset over (sort column, id): the cost of a page does not depend on its depth,
 * and a row that exists for the whole walk is seen exactly once, whatever is inserted or deleted.
 */
export async function listPage(db: Knex, reads: Reads, resource: CompiledResource, workspaceId: string, query: ListQuery) {
  const { table, name, list } = resource.def;
  const column = query.sort.replace(/^-/, '') as SortField;
  const order = query.sort.startsWith('-') ? 'desc' : 'asc';
  const narrowed = query.updated_since !== undefined || list.filters.some((filter) => query[filter] !== undefined);
  if (!narrowed) {
    // The common page: one statement compiled once, run by the driver.
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, name, query.sort);
    const { sql } = pageStatement(db, resource, column, order, after !== undefined);
    const values = after ? [workspaceId, after.value, after.value, after.id, query.limit + 1] : [workspaceId, query.limit + 1];
    return toPage((await reads.all(sql, values)) as Row[], query.limit, { resource: name, sort: query.sort, column }, (row) => toObject(resource, row));
  }
  // A filter or updated_since leaves the choice of index to the planner, which has theirs.
  const q = db.from(table).where('workspace_id', workspaceId);
  for (const filter of list.filters) {
    if (query[filter] !== undefined) q.where(filter, query[filter] as string);
  }
  if (query.updated_since !== undefined) q.where('updated_at', '>=', Date.parse(query.updated_since));
  return keysetPage(q.select(resource.columns), query, { resource: name, sort: query.sort }, (row: Row) => toObject(resource, row));
}
