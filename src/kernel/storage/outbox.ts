import type { Knex } from 'knex';
import { insertRows } from '../../db/insert-rows.js';
import type { Tx } from '../../db/tx.js';
import { newId } from '../../common/ids.js';
import type { Change, Row } from '../model/index.js';
import type { CompiledResource } from '../registry/index.js';
import { iso } from '../../db/iso.js';
import { traceparentNow } from '../../tracing/tracer.js';
import { isLiveWorkspace } from '../../common/modes.js';

/** One row of the `events` table: the event as it will be delivered, and what finds it. */
export interface OutboxEvent {
  id: string;
  workspace_id: string;
  type: string;
  object_id: string;
  payload: string;
  created_at: number;
  /** The W3C traceparent of the span that wrote it, when traced (tracing/tracer.ts): its deliveries join that trace. */
  traceparent: string | null;
}

/**
 * The plugin fields the write changed, with their values before it. Empty for a create or a
 * delete; `updated_at` is left out, as it changes with every update.
 */
export function previousValues(resource: CompiledResource, { before, after }: Change): Row {
  const previous: Row = {};
  if (!before || !after) return previous;
  for (const field of Object.keys(resource.def.fields)) {
    if (before[field] !== after[field]) previous[field] = before[field];
  }
  return previous;
}

/**
 * The events a change emits: `<r>.created`, `<r>.updated` or `<r>.deleted`, then each declared
 * event whose condition holds. Their data is the object after the change (before it, for a
 * delete) and the changed fields' previous values.
 */
export function eventsFor(resource: CompiledResource, workspaceId: string, change: Change, now: number): OutboxEvent[] {
  const { def } = resource;
  const object = (change.after ?? change.before) as Row;
  const kind = change.before === null ? 'created' : change.after === null ? 'deleted' : 'updated';
  const types = [`${def.name}.${kind}`];
  for (const [event, declared] of Object.entries(def.events ?? {})) {
    if (declared.when(change)) types.push(`${def.name}.${event}`);
  }
  const data = { object, previous: previousValues(resource, change) };
  const createdAt = iso(now);
  const traceparent = traceparentNow();
  const livemode = isLiveWorkspace(workspaceId);
  return types.map((type) => {
    const id = newId('evt_');
    return { id, workspace_id: workspaceId, type, object_id: String(object.id), payload: JSON.stringify({ id, type, created_at: createdAt, livemode, data }), created_at: now, traceparent };
  });
}

const EVENT_COLUMNS = ['id', 'workspace_id', 'type', 'object_id', 'payload', 'created_at', 'traceparent'] as const satisfies readonly (keyof OutboxEvent)[];

/** An event's entry in `events_pending`, the fan-out's queue: its id and what routes it. */
export interface PendingEntry {
  event_id: string;
  workspace_id: string;
  type: string;
  object_id: string;
  created_at: number;
}
export const PENDING_COLUMNS = ['event_id', 'workspace_id', 'type', 'object_id', 'created_at'] as const satisfies readonly (keyof PendingEntry)[];
export const pendingEntry = (event: Omit<OutboxEvent, 'payload' | 'traceparent'>): PendingEntry => ({ event_id: event.id, workspace_id: event.workspace_id, type: event.type, object_id: event.object_id, created_at: event.created_at });

/**
 * Writes the events inside the caller's transaction, each with its entry in `events_pending`:
 * they commit, or roll back, with the change.
 */
export async function writeEvents(db: Knex, tx: Tx, events: OutboxEvent[]): Promise<void> {
  await insertRows(db, tx, 'events', EVENT_COLUMNS, events);
  await insertRows(db, tx, 'events_pending', PENDING_COLUMNS, events.map(pendingEntry));
}
