import type { Knex } from 'knex';
import { asNumber } from '../db/decode.js';
import { pendingEntry } from '../kernel/storage/index.js';
import { subscriptionEvent, type SubscriptionRow } from './subscriptions.js';

/**
 * The service's own events about a workspace's subscriptions (docs/reference.md section 16), written in
 * the transaction that records what caused them, and fanned out like any other event to the
 * workspace's subscriptions that select them (never to the subscription they are about):
 * - `webhook.failing`: at least FAILING_SHARE of a subscription's last FAILING_WINDOW attempted
 *   deliveries failed (or are waiting for a retry after a failed attempt); at most once a day;
 * - `webhook.disabled`: the service turned a subscription off (410 Gone, or five failing days).
 */
export const FAILING_WINDOW = 20;
const FAILING_SHARE = 0.5;
const FAILING_EVERY_MS = 24 * 60 * 60 * 1000;

export type OperationalEvent = 'webhook.failing' | 'webhook.disabled';

const rowOf = async (trx: Knex.Transaction, id: string) => (await trx('webhook_subscriptions').where({ id }).first()) as SubscriptionRow | undefined;

/** An event about a subscription, as it now stands (`data.object`), in `trx`; `row` when already read. */
export async function emitAbout(trx: Knex.Transaction, type: OperationalEvent, subscriptionId: string, now: number, row?: SubscriptionRow): Promise<void> {
  const subscription = row ?? (await rowOf(trx, subscriptionId));
  if (!subscription) return;
  const event = subscriptionEvent(type, subscription, now);
  await trx('events').insert(event);
  await trx('events_pending').insert(pendingEntry(event));
}

/** After a failed attempt: `webhook.failing` when the subscription's recent deliveries mostly fail, unless reported within a day. */
export async function reportFailing(trx: Knex.Transaction, subscriptionId: string, now: number): Promise<boolean> {
  const sub = await rowOf(trx, subscriptionId);
  if (!sub || (sub.failing_reported_at != null && asNumber(sub.failing_reported_at) > now - FAILING_EVERY_MS)) return false;
  const recent = (await trx('webhook_deliveries')
    .select('status')
    .where({ subscription_id: subscriptionId })
    .where('attempts', '>', 0)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(FAILING_WINDOW)) as Array<{ status: string }>;
  const failed = recent.filter((d) => d.status !== 'succeeded').length;
  if (recent.length < FAILING_WINDOW || failed < FAILING_WINDOW * FAILING_SHARE) return false;
  await trx('webhook_subscriptions').where({ id: subscriptionId }).update({ failing_reported_at: now });
  await emitAbout(trx, 'webhook.failing', subscriptionId, now, { ...sub, failing_reported_at: now });
  return true;
}
