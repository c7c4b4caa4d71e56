import type { Knex } from 'knex';
import { newId } from '../common/ids.js';
import { asNumber } from '../db/decode.js';
import { iso } from '../db/iso.js';
import { toSubscription, type SubscriptionRow } from './subscriptions.js';

/**
 * The service's own events about a workspace's subscriptions (API.md section 16), written in
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

/** An event about a subscription, as it now stands (`data.object`), in `trx`. */
export async function emitAbout(trx: Knex.Transaction, type: OperationalEvent, subscriptionId: string, now: number): Promise<void> {
  const row = (await trx('webhook_subscriptions').where({ id: subscriptionId }).first()) as SubscriptionRow | undefined;
  if (!row) return;
  const id = newId('evt_');
  const payload = JSON.stringify({ id, type, created_at: iso(now), data: { object: toSubscription(row), previous: {} } });
  await trx('events').insert({ id, workspace_id: row.workspace_id, type, object_id: row.id, payload, created_at: now });
}

/** After a failed attempt: `webhook.failing` when the subscription's recent deliveries mostly fail, unless reported within a day. */
export async function reportFailing(trx: Knex.Transaction, subscriptionId: string, now: number): Promise<boolean> {
  const sub = (await trx('webhook_subscriptions').where({ id: subscriptionId }).first('failing_reported_at', 'enabled')) as { failing_reported_at: number | string | null; enabled: unknown } | undefined;
  if (!sub || (sub.failing_reported_at !== null && asNumber(sub.failing_reported_at) > now - FAILING_EVERY_MS)) return false;
  const recent = (await trx('webhook_deliveries')
    .select('status')
    .where({ subscription_id: subscriptionId })
    .where('attempts', '>', 0)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(FAILING_WINDOW)) as Array<{ status: string }>;
  const failed = recent.filter((d) => d.status !== 'succeeded').length;
  if (recent.length < FAILING_WINDOW || failed < FAILING_WINDOW * FAILING_SHARE) return false;
  await trx('webhook_subscriptions').where({ id: subscriptionId }).update({ failing_reported_at: now });
  await emitAbout(trx, 'webhook.failing', subscriptionId, now);
  return true;
}
