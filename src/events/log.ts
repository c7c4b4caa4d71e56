import type { Knex } from 'knex';
import { isIdOf } from '../common/ids.js';
import { keysetPage } from '../kernel/query/index.js';

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
 * bytes that were signed and delivered, placed in the page without being parsed again (unless
 * `render` gives it in an older API version).
 */
export async function eventLogPage(db: Knex, workspaceId: string, query: EventLogQuery, render?: (event: string) => string): Promise<string> {
  // No type at all (a key that reads no resource) selects nothing: knex writes `1 = 0`.
  const q = db('events').select('id', 'payload', 'created_at').where('workspace_id', workspaceId).whereIn('type', [...query.types]);
  if (query.since !== undefined) q.where('created_at', '>=', query.since);
  if (query.until !== undefined) q.where('created_at', '<', query.until);
  const page = await keysetPage(q, query, { resource: 'event', sort: query.sort }, (r: EventRow) => (render ? render(r.payload) : r.payload));
  return `{"data":[${page.data.join(',')}],"has_more":${page.has_more},"next_cursor":${JSON.stringify(page.next_cursor)}}`;
}

/** One event's payload, if the workspace has it and its type is one the caller may see. */
export async function findEvent(db: Knex, workspaceId: string, id: string, types: readonly string[]): Promise<string | undefined> {
  if (!isIdOf('evt_', id) || types.length === 0) return undefined;
  const row = (await db('events').first('payload').where({ workspace_id: workspaceId, id }).whereIn('type', [...types])) as { payload: string } | undefined;
  return row?.payload;
}
