import type { Knex } from 'knex';
import { asNumber } from '../../db/decode.js';
import { decodeCursor, encodeCursor, type SortValue } from './cursor.js';

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
    next_cursor: hasMore && last ? encodeCursor({ resource: at.resource, sort: at.sort, value: sortValueOf(last[at.column]), id: String(last.id) }) : null,
  };
}

/** A row's sort value as a cursor keeps it: a number (the drivers may answer a bigint as text), a date's text, or null. */
export function sortValueOf(stored: unknown): SortValue {
  if (stored == null) return null;
  return typeof stored === 'string' && !/^-?\d+$/.test(stored) ? stored : asNumber(stored);
}

/**
 * The walk a `sort` names: its column, `desc` for a leading `-` (`-created_at`: newest first),
 * and whether the column may hold null (`nullable` names those that may).
 */
export function walkOf(sort: string, nullable: ReadonlySet<string> = NONE): Walked {
  const column = sort.replace(/^-/, '');
  return { column, order: sort.startsWith('-') ? 'desc' : 'asc', nullable: nullable.has(column) };
}

const NONE: ReadonlySet<string> = new Set();

export interface Walked {
  column: string;
  order: 'asc' | 'desc';
  /** Rows without a value come after every row with one, in either order, by id. */
  nullable: boolean;
}

/**
 * `count` rows of `q` past `after` (when given) in the walk's order by (column, id). A nullable
 * column is walked in two ranges, each an index range of its own: the rows with a value, then
 * (when those run out) the rows without one, by id; a cursor in the second range reads it alone.
 */
async function rowsAfter<T>(q: Knex.QueryBuilder, walk: Walked, after: { value: Knex.Value | null; id: Knex.Value } | undefined, count: number): Promise<T[]> {
  const { column, order } = walk;
  if (!walk.nullable) {
    if (after) afterKeyset(q, column, order, after as { value: Knex.Value; id: Knex.Value });
    return (await q.orderBy([{ column, order }, { column: 'id', order }]).limit(count)) as T[];
  }
  const withoutValue = (rest: Knex.QueryBuilder, past: Knex.Value | undefined, wanted: number) => {
    rest.whereNull(column);
    if (past !== undefined) rest.where('id', order === 'desc' ? '<' : '>', past);
    return rest.orderBy('id', order).limit(wanted) as Promise<T[]>;
  };
  if (after && after.value === null) return withoutValue(q, after.id, count);
  const rest = q.clone();
  q.whereNotNull(column);
  if (after) afterKeyset(q, column, order, after as { value: Knex.Value; id: Knex.Value });
  const rows = (await q.orderBy([{ column, order }, { column: 'id', order }]).limit(count)) as T[];
  if (rows.length >= count) return rows;
  return [...rows, ...(await withoutValue(rest, undefined, count - rows.length))];
}

/**
 * One page of `q`'s rows by keyset over (column, id), in the order `sort` names (`-created_at`:
 * newest first), past the request's cursor, which is bound to `resource` and `sort`: how every
 * list built with knex walks (the resources' filtered pages, keys, webhooks, deliveries, the
 * audit log, the event log).
 */
export async function keysetPage<T extends object, U>(q: Knex.QueryBuilder, query: { limit: number; cursor?: string }, at: { resource: string; sort: string; nullable?: ReadonlySet<string> }, map: (row: T) => U) {
  const walk = walkOf(at.sort, at.nullable);
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, at.resource, at.sort);
  return toPage(await rowsAfter<T>(q, walk, after, query.limit + 1), query.limit, { ...at, column: walk.column }, map);
}

/** How a checked page walks before it leaves the rest of the page to the database (checkedKeysetPage). */
export interface Walk {
  /** The most rows it reads and checks itself. */
  rows: number;
  /** Each chunk's size over the one before (the first is the page's size, plus one); Infinity: the second takes every row left. */
  growth: number;
}

/**
 * keysetPage() for rows that must pass a check the database could also make, but at a cost
 * every page pays (a search's words, kernel/storage/search-index.ts CheckedWords): the page walks `q` in
 * chunks as `check.walk` says, keeps the rows `check.has` accepts and stops when it has its
 * rows or `q` its end. Past `check.walk.rows` rows walked, the rest of the page comes from
 * `check.narrow(q)`, after the last row walked. Either way, the page's rows are those
 * keysetPage() would give for the narrowed query, in its order.
 */
export async function checkedKeysetPage<T extends object, U>(
  q: Knex.QueryBuilder,
  query: { limit: number; cursor?: string },
  at: { resource: string; sort: string; nullable?: ReadonlySet<string> },
  map: (row: T) => U,
  check: { walk: Walk; has(row: T): boolean; narrow(q: Knex.QueryBuilder): Knex.QueryBuilder },
) {
  const walk = walkOf(at.sort, at.nullable);
  let after: { value: Knex.Value | null; id: Knex.Value } | undefined = query.cursor === undefined ? undefined : decodeCursor(query.cursor, at.resource, at.sort);
  const wanted = query.limit + 1;
  const kept: T[] = [];
  const page = () => toPage(kept, query.limit, { ...at, column: walk.column }, map);
  let walked = 0;
  const { rows: most, growth } = check.walk;
  for (let size = Math.min(wanted, most); walked < most; size = Math.min(size * growth, most - walked)) {
    const rows = await rowsAfter<T>(q.clone(), walk, after, size);
    walked += rows.length;
    for (const row of rows) {
      if (check.has(row) && kept.push(row) === wanted) return page();
    }
    if (rows.length < size) return page();
    const last = rows[rows.length - 1] as Record<string, unknown>;
    after = { value: sortValueOf(last[walk.column]), id: String(last.id) };
  }
  kept.push(...(await rowsAfter<T>(check.narrow(q), walk, after, wanted - kept.length)));
  return page();
}
