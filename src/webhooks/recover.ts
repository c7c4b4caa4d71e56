import type { Knex } from 'knex';
import { asNumber } from '../db/decode.js';
import { transaction } from '../db/dialects/index.js';
import { matches } from '../events/patterns.js';
import { newDelivery, type DeliveryRow } from './deliveries.js';
import { ApiError } from '../common/errors.js';
import type { Who } from '../common/who.js';
import { findSubscription, requireWebhookPlan, type SubscriptionRow, type WebhookDeps } from './subscriptions.js';
import { readWindow } from '../common/window.js';
import { type Line, releaseLines } from './ordering.js';

/** Events looked at per transaction: each one short, whatever the window holds. */
const RECOVER_BATCH = 1000;

/**
 * Sends a subscription what it missed in [since, until) (docs/reference.md section 11): its failed
 * deliveries of the window are due again with a full retry schedule, and every event of the
 * window that it selects (written after it existed, already fanned out) but has no delivery
 * for, because it was disabled then, gets one. The event id is the `webhook-id`, so a
 * receiver sees the original one. A delivery already made is never made again (a unique
 * index on subscription and event), so recovering twice sends nothing twice that succeeded.
 * Returns how many deliveries it made due.
 */
async function recoverDeliveries(db: Knex, subscription: SubscriptionRow, window: { since: number; until: number }, retries: number, now: number): Promise<number> {
  const since = Math.max(window.since, asNumber(subscription.created_at));
  // per_object: what is sent again joins its line held, and goes in the order of its object's events.
  const ordered = subscription.ordering === 'per_object';
  const lines: Line[] = [];
  const failedInWindow = () => db('webhook_deliveries').where({ subscription_id: subscription.id, status: 'failed' }).where('created_at', '>=', window.since).where('created_at', '<', window.until);
  if (ordered) {
    const objects = (await failedInWindow().distinct('object_id').whereNotNull('object_id')) as Array<{ object_id: string }>;
    lines.push(...objects.map((o) => ({ subscription_id: subscription.id, object_id: o.object_id })));
  }
  // Back in its line at its place (line_seq), per_object; a none subscription's have no place.
  const failed = await failedInWindow().update({ status: ordered ? 'held' : 'pending', line_seq: ordered ? db.ref('event_seq') : null, next_attempt_at: now, retries_left: retries, lease_owner: null, updated_at: now });

  const patterns = JSON.parse(subscription.events) as string[];
  let added = 0;
  let after: { created_at: number; seq: number } | undefined;
  for (;;) {
    const q = db('events as e')
      .select('e.seq', 'e.id', 'e.type', 'e.created_at', 'e.object_id')
      .where('e.workspace_id', subscription.workspace_id)
      .where('e.created_at', '>=', since)
      .where('e.created_at', '<', window.until)
      // Fanned out already (an event still pending is the fan-out's to deliver), and not a test.
      .whereNotExists((sub) => sub.select(db.raw('1')).from('events_pending as p').whereRaw('p.event_id = e.id'))
      .whereNot('e.type', 'webhook.test')
      .whereNotExists((sub) => sub.select(db.raw('1')).from('webhook_deliveries as d').where('d.subscription_id', subscription.id).whereRaw('d.event_id = e.id'));
    if (after) q.where((w) => w.where('e.created_at', '>', after!.created_at).orWhere((x) => x.where('e.created_at', after!.created_at).where('e.seq', '>', after!.seq)));
    const events = (await q.orderBy([{ column: 'e.created_at' }, { column: 'e.seq' }]).limit(RECOVER_BATCH)) as Array<{ seq: number | string; id: string; type: string; created_at: number | string; object_id: string }>;
    if (events.length === 0) break;
    const last = events[events.length - 1]!;
    after = { created_at: asNumber(last.created_at), seq: asNumber(last.seq) };
    const deliveries: DeliveryRow[] = events
      .filter((e) => matches(patterns, e.type))
      .map((e) => {
        const delivery = newDelivery(subscription.workspace_id, subscription.id, e, retries, now);
        if (!ordered) return delivery;
        lines.push({ subscription_id: subscription.id, object_id: e.object_id });
        return { ...delivery, status: 'held', object_id: e.object_id, event_seq: asNumber(e.seq), line_seq: asNumber(e.seq) };
      });
    if (deliveries.length > 0) {
      await transaction(db, (trx) => trx('webhook_deliveries').insert(deliveries).onConflict(['subscription_id', 'event_id']).ignore());
      added += deliveries.length;
    }
    if (events.length < RECOVER_BATCH) break;
  }
  await releaseLines(db, lines, now);
  return failed + added;
}

/** docs/reference.md section 11: what the subscription missed in the window, sent (again). */
export async function recoverWebhook(deps: WebhookDeps, who: Who, id: string, body: { since: string; until?: string }) {
  const subscription = await findSubscription(deps.db, who.workspace.id, id);
  await requireWebhookPlan(deps.db, who.workspace);
  const now = deps.clock.now();
  const { since, until } = readWindow(body, 'body', now) as { since: number; until: number };
  if (!subscription.enabled) {
    throw new ApiError('subscription_disabled', 'The subscription is disabled: recovery sends to it, so enable it first (PATCH {"enabled": true}), then recover.');
  }
  const deliveries = await recoverDeliveries(deps.db, subscription, { since, until }, deps.config.webhookRetryDelays.length, now);
  if (deliveries > 0) deps.notifier.notify();
  return { deliveries };
}
