import type { Knex } from 'knex';
import { whereAllowsWebhooks } from '../auth/plans.js';
import { asNumber } from '../db/decode.js';
import { takeQueued, transaction } from '../db/dialects/index.js';
import { matches } from '../events/patterns.js';
import { PENDING_COLUMNS, type PendingEntry } from '../kernel/storage/index.js';
import { newDelivery, type DeliveryRow } from './deliveries.js';
import { type Line, releaseLines } from './ordering.js';

const INSERT_CHUNK = 500;

/**
 * Turns committed events into deliveries: each event once, to the subscriptions enabled at
 * that moment that existed when it was written and whose patterns select it, in workspaces
 * whose plan includes webhooks. The events waiting are those in `events_pending`, where each
 * write adds its events: claimed (taken off that table), matched and turned into deliveries in
 * one transaction, so a crash leaves them to the next worker and two workers never fan out the
 * same event. An entry holds what routes its event, so the events themselves are not read:
 * each entry is written once and deleted once (migrations/20261127000000_events_pending.ts).
 */
export async function fanOut(db: Knex, now: number, batch: number, retries: number): Promise<{ events: number; deliveries: number }> {
  const fanned = await transaction(db, async (trx) => {
    // Ids are made in time order: the oldest waiting come first (docs/reference.md section 8 promises no order).
    // created_at as the driver gives it back (a string from MySQL's bigint): read with asNumber.
    const taken = (await takeQueued(trx, { table: 'events_pending', key: 'event_id', columns: PENDING_COLUMNS, limit: batch })) as Array<Omit<PendingEntry, 'created_at'> & { created_at: number | string }>;
    if (taken.length === 0) return { events: 0, deliveries: 0, lines: [] };
    const events = taken.map(({ event_id, ...routing }) => ({ id: event_id, ...routing }));
    const workspaces = [...new Set(events.map((e) => e.workspace_id))];
    const subscriptions = (await whereAllowsWebhooks(
      trx('webhook_subscriptions as s')
      .join('workspaces as w', 'w.id', 's.workspace_id')
      .join('plans as p', 'p.name', 'w.plan')
      .select('s.id', 's.workspace_id', 's.events', 's.created_at', 's.ordering')
      .whereIn('s.workspace_id', workspaces)
      .whereNull('s.deleted_at')
      .where('s.enabled', true),
      'p',
    )) as Array<{ id: string; workspace_id: string; events: string; created_at: number | string; ordering: string }>;
    const byWorkspace = new Map<string, Array<{ id: string; patterns: string[]; created_at: number; ordered: boolean }>>();
    for (const s of subscriptions) {
      const list = byWorkspace.get(s.workspace_id) ?? [];
      list.push({ id: s.id, patterns: JSON.parse(s.events) as string[], created_at: asNumber(s.created_at), ordered: s.ordering === 'per_object' });
      byWorkspace.set(s.workspace_id, list);
    }
    const deliveries: DeliveryRow[] = [];
    const ordered: DeliveryRow[] = [];
    for (const event of events) {
      for (const s of byWorkspace.get(event.workspace_id) ?? []) {
        // An event about a subscription (webhook.failing, webhook.disabled) goes to the others only.
        if (s.created_at <= asNumber(event.created_at) && matches(s.patterns, event.type) && s.id !== event.object_id) {
          const delivery = newDelivery(event.workspace_id, s.id, event, retries, now);
          deliveries.push(delivery);
          if (s.ordered) ordered.push(delivery);
        }
      }
    }
    const lines = await placeInLines(trx, ordered);
    // By subscription id: the foreign key takes a shared lock on each subscription row, in the
    // order recording the attempts takes its exclusive ones (record.ts), so the two never cycle.
    deliveries.sort((a, b) => (a.subscription_id < b.subscription_id ? -1 : a.subscription_id > b.subscription_id ? 1 : 0));
    for (let i = 0; i < deliveries.length; i += INSERT_CHUNK) await trx('webhook_deliveries').insert(deliveries.slice(i, i + INSERT_CHUNK));
    return { events: events.length, deliveries: deliveries.length, lines };
  });
  // Each line's first, where nothing before it is unfinished, goes now; the rest wait their turn.
  // After the commit, not in the transaction: that holds the subscriptions' rows (the foreign
  // key's shared locks), and recording an attempt locks deliveries before subscriptions.
  await releaseLines(db, fanned.lines, now);
  return { events: fanned.events, deliveries: fanned.deliveries };
}

/**
 * The deliveries of per_object subscriptions, placed in their objects' lines: held, each with
 * its object and its event's seq (the order of the object's versions); the lines they joined.
 */
async function placeInLines(trx: Knex.Transaction, ordered: DeliveryRow[]): Promise<Line[]> {
  if (ordered.length === 0) return [];
  const seqs = new Map<string, { seq: number; object: string }>();
  const ids = [...new Set(ordered.map((d) => d.event_id))];
  for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
    const rows = (await trx('events').select('id', 'seq', 'object_id').whereIn('id', ids.slice(i, i + INSERT_CHUNK))) as Array<{ id: string; seq: number | string; object_id: string }>;
    for (const row of rows) seqs.set(row.id, { seq: asNumber(row.seq), object: row.object_id });
  }
  const lines: Line[] = [];
  for (const delivery of ordered) {
    const event = seqs.get(delivery.event_id);
    if (!event) continue;
    delivery.status = 'held';
    delivery.object_id = event.object;
    delivery.event_seq = event.seq;
    delivery.line_seq = event.seq;
    lines.push({ subscription_id: delivery.subscription_id, object_id: event.object });
  }
  return lines;
}
