import type { Knex } from 'knex';
import { asNumber } from '../db/decode.js';
import { decodeCursor, encodeCursor } from './cursor.js';

/**
 * Rows strictly after (value, id) in the walk's order: the keyset condition of every list. The
 * redundant `column <= value` (or >=) comes first so that both MariaDB and SQLite seek on the
 * (workspace_id, column, id) index to the cursor, instead of walking every row before it and
 * filtering; only the rows sharing the cursor's value are then told apart by id.
 */
export function afterKeyset(q: Knex.QueryBuilder, column: string, order: 'asc' | 'desc', after: { value: Knex.Value; id: Knex.Value }): Knex.QueryBuilder {
  const cmp = order === 'desc' ? '<' : '>';
  return q.where(column, `${cmp}=`, after.value).andWhere((w) => w.where(column, cmp, after.value).orWhere('id', cmp, after.id));
}

/**
 * A page from `limit + 1` rows: the extra row only tells that there is more, and the last row
 * kept gives the cursor of the next page.
 */
export function toPage<T extends object, U>(rows: T[], limit: number, at: { resource: string; sort: string; column: string }, map: (row: T) => U) {
  const hasMore = rows.length > limit;
  if (hasMore) rows.length = limit;
  const last = rows[rows.length - 1] as Record<string, unknown> | undefined;
  return {
    data: rows.map(map),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor({ resource: at.resource, sort: at.sort, value: asNumber(last[at.column]), id: String(last.id) }) : null,
  };
}

/**
 * One page of `q`'s rows by keyset over (column, id), in the order `sort` names (`-created_at`:
 * newest first), past the request's cursor, which is bound to `resource` and `sort`: how every
 * list built with knex walks (the resources' filtered pages, keys, webhooks, deliveries, the
 * audit log, the event log).
 */
export async function keysetPage<T extends object, U>(q: Knex.QueryBuilder, query: { limit: number; cursor?: string }, at: { resource: string; sort: string }, map: (row: T) => U) {
  const column = at.sort.replace(/^-/, '');
  const order = at.sort.startsWith('-') ? 'desc' : 'asc';
  if (query.cursor !== undefined) afterKeyset(q, column, order, decodeCursor(query.cursor, at.resource, at.sort));
  const rows = (await q.orderBy([{ column, order }, { column: 'id', order }]).limit(query.limit + 1)) as T[];
  return toPage(rows, query.limit, { ...at, column }, map);
}
