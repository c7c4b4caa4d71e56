import type { Knex } from 'knex';
import { whereAllowsWebhooks } from '../auth/plans.js';
import { asNumber } from '../db/decode.js';
import { claimRows, transaction } from '../db/dialect.js';
import { matches } from '../events/patterns.js';
import { newDelivery, type DeliveryRow } from './deliveries.js';

const INSERT_CHUNK = 500;

/**
 * Turns committed events into deliveries: each event once, to the subscriptions enabled at
 * that moment that existed when it was written and whose patterns select it, in workspaces
 * whose plan includes webhooks. Claimed, matched and marked in one transaction, so a crash
 * leaves the events to the next worker and two workers never fan out the same event. The
 * claim marks them fanned out (`dispatched_at`) in its one UPDATE: what another transaction
 * sees is the commit, and each event's row and its index entry are written once.
 */
export async function fanOut(db: Knex, now: number, batch: number, retries: number): Promise<{ events: number; deliveries: number }> {
  return transaction(db, async (trx) => {
    const seqs = await claimRows(trx, {
      table: 'events',
      key: 'seq',
      claimable: (q) => q.whereNull('dispatched_at'),
      order: 'seq',
      limit: batch,
      set: { dispatched_at: now },
    });
    if (seqs.length === 0) return { events: 0, deliveries: 0 };
    const events = (await trx('events').select('seq', 'id', 'workspace_id', 'type', 'object_id', 'created_at').whereIn('seq', seqs)) as Array<{ seq: number; id: string; workspace_id: string; type: string; object_id: string; created_at: number | string }>;
    const workspaces = [...new Set(events.map((e) => e.workspace_id))];
    const subscriptions = (await whereAllowsWebhooks(
      trx('webhook_subscriptions as s')
      .join('workspaces as w', 'w.id', 's.workspace_id')
      .join('plans as p', 'p.name', 'w.plan')
      .select('s.id', 's.workspace_id', 's.events', 's.created_at')
      .whereIn('s.workspace_id', workspaces)
      .whereNull('s.deleted_at')
      .where('s.enabled', true),
      'p',
    )) as Array<{ id: string; workspace_id: string; events: string; created_at: number | string }>;
    const byWorkspace = new Map<string, Array<{ id: string; patterns: string[]; created_at: number }>>();
    for (const s of subscriptions) {
      const list = byWorkspace.get(s.workspace_id) ?? [];
      list.push({ id: s.id, patterns: JSON.parse(s.events) as string[], created_at: asNumber(s.created_at) });
      byWorkspace.set(s.workspace_id, list);
    }
    const deliveries: DeliveryRow[] = [];
    for (const event of events) {
      for (const s of byWorkspace.get(event.workspace_id) ?? []) {
        // An event about a subscription (webhook.failing, webhook.disabled) goes to the others only.
        if (s.created_at <= asNumber(event.created_at) && matches(s.patterns, event.type) && s.id !== event.object_id) deliveries.push(newDelivery(event.workspace_id, s.id, event, retries, now));
      }
    }
    // By subscription id: the foreign key takes a shared lock on each subscription row, in the
    // order recording the attempts takes its exclusive ones (record.ts), so the two never cycle.
    deliveries.sort((a, b) => (a.subscription_id < b.subscription_id ? -1 : a.subscription_id > b.subscription_id ? 1 : 0));
    for (let i = 0; i < deliveries.length; i += INSERT_CHUNK) await trx('webhook_deliveries').insert(deliveries.slice(i, i + INSERT_CHUNK));
    return { events: events.length, deliveries: deliveries.length };
  });
}
