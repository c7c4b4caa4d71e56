import { checkSortValue, decodeCursor } from './cursor.js';
import { isKernelSort, type FieldKind, type Row } from '../model/index.js';
import { ApiError } from '../../common/errors.js';
import { inValues, SQL_OPERATOR, type OperatorFilter } from './filters.js';
import { checkedKeysetPage, keysetPage, toPage, walkOf } from './keyset.js';
import { searchWords } from './search.js';
import { dialectFor } from '../../db/dialects/index.js';
import type { ResourceStore } from '../storage/index.js';
import { epochMsOf } from '../../common/rfc3339.js';

export interface ListQuery {
  limit: number;
  sort: string;
  cursor?: string;
  updated_since?: string;
  /** Search words (kernel/query/search.ts), on a resource with searchable fields. */
  q?: string;
  [filter: string]: unknown;
}

/**
 * One page by keyset over (sort column, id): the cost of a page does not depend on its depth,
 * and a row that exists for the whole walk is seen exactly once, whatever is inserted or deleted.
 */
export async function listPage(store: ResourceStore, workspaceId: string, query: ListQuery) {
  const { name, list } = store.resource.def;
  const { column, order } = walkOf(query.sort);
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, name, query.sort);
  // Bound to its sort already; its value must also be one of the sort's column (a crafted one would reach the database).
  if (after) checkSortValue(after.value, store.resource.kinds[column]?.column.type === 'string' ? 'string' : 'number', store.resource.nullableSorts.has(column));
  const operators = store.resource.filters.filter((filter) => query[filter.parameter] !== undefined);
  const narrowed = operators.length > 0 || query.updated_since !== undefined || query.q !== undefined || list.filters.some((filter) => query[filter] !== undefined);
  if (!narrowed) {
    // The common page: one statement compiled once, run by the driver.
    const rows = await store.page(workspaceId, { column, order }, after, query.limit + 1);
    return toPage(rows, query.limit, { resource: name, sort: query.sort, column }, (row) => store.toObject(row, workspaceId));
  }
  // An equality filter has its index (workspace, field, sort, id): the planner's choice. Past a
  // cursor with only ranges, [in], updated_since or common search words, the sort's keyset
  // index (MariaDB would otherwise walk the workspace's rows from the top to the cursor); a
  // search's few matches drive the query themselves (kernel/storage/search-index.ts).
  const equality = list.filters.filter((filter) => query[filter] !== undefined);
  const words = query.q === undefined ? undefined : searchWords(query.q);
  const walkedIndex = equality.length === 0 && isKernelSort(column) ? column : undefined;
  // Common search words walk the list's index page after page, a cursor or not.
  const found = words ? await store.search(workspaceId, words, walkedIndex) : { q: store.query(workspaceId, query.cursor !== undefined ? walkedIndex : undefined) };
  if (!found) {
    // A word that starts no term: no object, whatever else the query says (its cursor is still checked).
    return { data: [], has_more: false, next_cursor: null };
  }
  const { q, checked } = found;
  // Each value as its kind stores it, as [in]'s are (a boolean, coerced from the query's text, as 1 or 0).
  for (const filter of equality) {
    const fieldKind = store.resource.kinds[filter];
    among(q, fieldKind, filter, [(fieldKind ? fieldKind.encode(query[filter]) : query[filter]) as string]);
  }
  if (query.updated_since !== undefined) q.where('updated_at', '>=', epochMsOf(query.updated_since));
  for (const filter of operators) narrow(q, filter, query[filter.parameter], store.resource.kinds[filter.field]);
  const at = { resource: name, sort: query.sort, nullable: store.resource.nullableSorts };
  q.select(store.resource.columns);
  const toObject = (row: Row) => store.toObject(row, workspaceId);
  return checked ? checkedKeysetPage(q, query, at, toObject, checked) : keysetPage(q, query, at, toObject);
}

/** Adds one operator's condition (ANDed with the others); `[in]` values are checked here, 400 naming the parameter. */
function narrow(q: ReturnType<ResourceStore['query']>, filter: OperatorFilter, value: unknown, fieldKind: FieldKind | undefined): void {
  if (filter.operator !== 'in') {
    q.where(filter.field, SQL_OPERATOR[filter.operator], filter.encode(value) as number | string);
    return;
  }
  const parsed = inValues(filter, String(value));
  if ('problem' in parsed) {
    throw new ApiError('invalid_parameter', `Invalid query parameter: ${filter.parameter}.`, { errors: [{ parameter: filter.parameter, message: parsed.problem }] });
  }
  among(q, fieldKind, filter.field, parsed.values.map((v) => filter.encode(v) as string));
}

/**
 * Rows whose `field` is one of `values`, alike on every backend: without regard to letter case
 * where its kind says so (an email: the dialect's caselessAmong, which its filter's index
 * serves), else exactly (a text: the dialect's textExactly).
 */
export function among(q: ReturnType<ResourceStore['query']>, fieldKind: FieldKind | undefined, field: string, values: readonly string[]): void {
  if (fieldKind?.caseless) {
    dialectFor(q).caselessAmong(q, field, values);
    return;
  }
  if (values.length === 1) q.where(field, values[0] as string);
  else q.whereIn(field, [...values]);
  if (fieldKind?.name === 'text') dialectFor(q).textExactly(q, field, values);
}
