import type { Knex } from 'knex';
import { decodeCursor } from '../kernel/cursor.js';
import { afterKeyset, toPage } from '../kernel/keyset.js';

export interface EventLogQuery {
  limit: number;
  cursor?: string;
  /** The event types the caller may see and asked for (already narrowed); empty: nothing. */
  types: readonly string[];
  since?: number;
  until?: number;
  sort: 'created_at' | '-created_at';
}

interface EventRow {
  id: string;
  payload: string;
  created_at: number | string;
}

/**
 * A page of a workspace's event log, as JSON text: each event is its stored payload, the very
 * bytes that were signed and delivered, placed in the page without being parsed again.
 */
export async function eventLogPage(db: Knex, workspaceId: string, query: EventLogQuery): Promise<string> {
  const after = query.cursor !== undefined ? decodeCursor(query.cursor, 'event', query.sort) : undefined;
  if (query.types.length === 0) return JSON.stringify({ data: [], has_more: false, next_cursor: null });
  const order = query.sort === 'created_at' ? 'asc' : 'desc';
  const q = db('events').select('id', 'payload', 'created_at').where('workspace_id', workspaceId).whereIn('type', [...query.types]);
  if (query.since !== undefined) q.where('created_at', '>=', query.since);
  if (query.until !== undefined) q.where('created_at', '<', query.until);
  if (after) afterKeyset(q, 'created_at', order, after);
  const rows = (await q.orderBy([{ column: 'created_at', order }, { column: 'id', order }]).limit(query.limit + 1)) as EventRow[];
  const page = toPage(rows, query.limit, { resource: 'event', sort: query.sort, column: 'created_at' }, (r) => r.payload);
  return `{"data":[${page.data.join(',')}],"has_more":${page.has_more},"next_cursor":${JSON.stringify(page.next_cursor)}}`;
}

/** One event's payload, if the workspace has it and its type is one the caller may see. */
export async function findEvent(db: Knex, workspaceId: string, id: string, types: readonly string[]): Promise<string | undefined> {
  if (!/^evt_[0-9a-z]{1,60}$/.test(id) || types.length === 0) return undefined;
  const row = (await db('events').first('payload').where({ workspace_id: workspaceId, id }).whereIn('type', [...types])) as { payload: string } | undefined;
  return row?.payload;
}
