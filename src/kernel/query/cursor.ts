import { ApiError } from '../../common/errors.js';

/**
 * The position after the last row of a page: its sort value as stored (epoch milliseconds, an
 * integer, a date's text, or null for a row without one) and id, bound to a resource and a sort.
 */
export type SortValue = number | string | null;

export interface Cursor {
  resource: string;
  sort: string;
  value: SortValue;
  id: string;
}

/** A sort value a cursor may carry: a safe integer, a date (YYYY-MM-DD), or null. */
const isSortValue = (v: unknown): v is SortValue => v === null || Number.isSafeInteger(v) || (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v));

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify({ r: cursor.resource, s: cursor.sort, v: cursor.value, i: cursor.id })).toString('base64url');
}

function invalid(detail: string): ApiError {
  return new ApiError('invalid_cursor', detail, { errors: [{ parameter: 'cursor', message: detail }] });
}

/** A cursor whose value cannot be one of its sort's (a text for an amount, null for a column that holds none). */
export function checkSortValue(value: SortValue, kind: 'number' | 'string', nullable: boolean): void {
  if (value === null ? !nullable : typeof value !== kind) throw invalid('The cursor is malformed; pass next_cursor as you received it.');
}

export function decodeCursor(raw: string, resource: string, sort: string): Cursor {
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw invalid('The cursor is malformed; pass next_cursor as you received it.');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid('The cursor is malformed; pass next_cursor as you received it.');
  }
  const c = parsed as Record<string, unknown>;
  if (
    typeof c !== 'object' || c === null || Array.isArray(c) || Object.keys(c).length !== 4 ||
    typeof c.r !== 'string' || typeof c.s !== 'string' || !isSortValue(c.v) || typeof c.i !== 'string' || !/^[a-z0-9_]{1,64}$/.test(c.i)
  ) {
    throw invalid('The cursor is malformed; pass next_cursor as you received it.');
  }
  if (c.r !== resource) throw invalid(`The cursor was made for another resource (${c.r}), not for ${resource}.`);
  if (c.s !== sort) throw invalid(`The cursor was made for sort=${c.s}; this request asks for sort=${sort}.`);
  return { resource: c.r, sort: c.s, value: c.v as SortValue, id: c.i };
}
