import { asBoolean, asNumber } from '../db/decode.js';
import type { Row } from './define.js';
import type { CompiledResource } from './registry.js';

/** Stored epoch milliseconds as RFC 3339 UTC with milliseconds; null stays null. */
export const iso = (ms: unknown): string | null => (ms == null ? null : new Date(asNumber(ms)).toISOString());

/** A stored row as clients see it: times as RFC 3339 UTC with milliseconds, booleans as booleans. */
export function toObject(resource: CompiledResource, row: Row): Row {
  const out: Row = {};
  for (const column of resource.columns) out[column] = row[column] ?? null;
  for (const field of resource.momentFields) out[field] = iso(row[field]);
  for (const field of resource.booleanFields) out[field] = asBoolean(row[field]);
  out.created_at = iso(row.created_at);
  out.updated_at = iso(row.updated_at);
  return out;
}
