import type { Knex } from 'knex';
import { asNullableNumber, asNumber } from '../db/decode.js';
import { transaction } from '../db/dialects/index.js';
import { ApiError } from '../common/errors.js';
import { isIdOf, newId } from '../common/ids.js';
import { keysetPage } from '../kernel/query/index.js';
import { iso } from '../db/iso.js';
import { isLiveWorkspace } from '../common/modes.js';
import type { Who } from '../common/who.js';
import { heads } from './ordering.js';
import { findSubscription, requireWebhookPlan, subscriptionEvent, type SubscriptionRow, type WebhookDeps } from './subscriptions.js';

/** A delivery's states: `held` waits behind an earlier one about its object (per_object ordering, webhooks/ordering.ts). */
export const DELIVERY_STATUSES = ['pending', 'held', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryRow {
  id: string;
  workspace_id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  retries_left: number;
  next_attempt_at: number | string | null;
  lease_owner: string | null;
  last_response_status: number | null;
  last_error: string | null;
  created_at: number | string;
  updated_at: number | string;
  delivered_at: number | string | null;
  /** Its object, for a per_object subscription's delivery (its line); null otherwise. */
  object_id: string | null;
  /** Its place in its object's line (the event's seq); null unless per_object. */
  event_seq: number | string | null;
  /** event_seq while it is not done (pending or held), null once it is: what finds a line's head (webhooks/ordering.ts). */
  line_seq: number | string | null;
}

/** A delivery as clients see it; `heldBehind` names the delivery a held one waits for (webhooks/ordering.ts heads). */
export function toDelivery(row: DeliveryRow, heldBehind: string | null = null) {
  return {
    id: row.id,
    webhook_id: row.subscription_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: asNumber(row.attempts),
    last_response_status: asNullableNumber(row.last_response_status),
    last_error: row.last_error,
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    created_at: iso(row.created_at),
    delivered_at: iso(row.delivered_at),
    held_behind: row.status === 'held' ? heldBehind : null,
    livemode: isLiveWorkspace(row.workspace_id),
  };
}

/** A new delivery of an event to a subscription, due now. */
export function newDelivery(workspaceId: string, subscriptionId: string, event: { id: string; type: string }, retries: number, now: number): DeliveryRow {
  return {
    id: newId('dlv_'),
    workspace_id: workspaceId,
    subscription_id: subscriptionId,
    event_id: event.id,
    event_type: event.type,
    status: 'pending',
    attempts: 0,
    retries_left: retries,
    next_attempt_at: now,
    lease_owner: null,
    last_response_status: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    delivered_at: null,
    object_id: null,
    event_seq: null,
    line_seq: null,
  };
}

/**
 * A `webhook.test` event for one subscription only: it is written without an entry in
 * `events_pending`, so the fan-out never offers it to other subscriptions, with its delivery
 * beside it.
 */
async function createTestDelivery(db: Knex, subscription: SubscriptionRow, retries: number, now: number): Promise<DeliveryRow> {
  const event = subscriptionEvent('webhook.test', subscription, now);
  const delivery = newDelivery(subscription.workspace_id, subscription.id, event, retries, now);
  await transaction(db, async (trx) => {
    await trx('events').insert(event);
    await trx('webhook_deliveries').insert(delivery);
  });
  return delivery;
}

/** A page of a subscription's deliveries, newest first, of one status or all. */
async function listDeliveries(db: Knex, subscriptionId: string, query: { limit: number; cursor?: string; status?: string }) {
  const q = db('webhook_deliveries').where({ subscription_id: subscriptionId });
  if (query.status) q.where({ status: query.status });
  const page = await keysetPage(q, query, { resource: 'delivery', sort: '-created_at' }, toDelivery);
  await sayHeldBehind(db, page.data);
  return page;
}

/** Each held delivery's `held_behind`: the delivery at the head of its line (webhooks/ordering.ts). */
async function sayHeldBehind(db: Knex, deliveries: Array<ReturnType<typeof toDelivery>>): Promise<void> {
  const held = deliveries.filter((d) => d.status === 'held');
  if (held.length === 0) return;
  const rows = (await db('webhook_deliveries').select('id', 'status', 'subscription_id', 'object_id').whereIn('id', held.map((d) => d.id))) as Array<{ id: string; status: string; subscription_id: string; object_id: string | null }>;
  const found = await heads(db, rows);
  for (const d of held) d.held_behind = found.get(d.id) ?? null;
}

/** How many of each subscription's latest deliveries recentDeliveries() gives. */
export const RECENT_PER_SUBSCRIPTION = 5;

/**
 * The latest deliveries of each of `subscriptionIds` (of this workspace; others' give none),
 * newest first, in one statement: what a list of subscriptions shows beside each, without a
 * request per row.
 */
export async function recentDeliveries(db: Knex, workspaceId: string, subscriptionIds: readonly string[]): Promise<Array<{ webhook_id: string; deliveries: ReturnType<typeof toDelivery>[] }>> {
  const ranked = db('webhook_deliveries')
    .select('*')
    .rowNumber('recent', (q) => q.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).partitionBy('subscription_id'))
    .where({ workspace_id: workspaceId })
    .whereIn('subscription_id', [...subscriptionIds]);
  const rows = (await db.from(ranked.as('r')).where('recent', '<=', RECENT_PER_SUBSCRIPTION).orderBy([{ column: 'subscription_id' }, { column: 'recent' }])) as Array<DeliveryRow & { recent: number }>;
  const bySubscription = new Map<string, ReturnType<typeof toDelivery>[]>(subscriptionIds.map((id) => [id, []]));
  for (const row of rows) bySubscription.get(row.subscription_id)?.push(toDelivery(row));
  await sayHeldBehind(db, [...bySubscription.values()].flat());
  return [...bySubscription].map(([webhook_id, deliveries]) => ({ webhook_id, deliveries }));
}

const deliveryNotFound = (deliveryId: string) => new ApiError('not_found', `No delivery with id ${deliveryId} for this subscription.`);

/**
 * Makes a delivery due now. A pending one keeps its schedule after this attempt; a finished
 * one (failed or succeeded) gets exactly one more attempt. One in flight is left to finish.
 */
async function retryDelivery(db: Knex, subscriptionId: string, deliveryId: string, now: number): Promise<DeliveryRow> {
  if (!isIdOf('dlv_', deliveryId)) throw deliveryNotFound(deliveryId);
  return transaction(db, async (trx) => {
    const row = (await trx('webhook_deliveries').first().where({ id: deliveryId, subscription_id: subscriptionId }).forUpdate()) as DeliveryRow | undefined;
    if (!row) throw deliveryNotFound(deliveryId);
    const inFlight = row.status === 'pending' && row.lease_owner !== null && asNumber(row.next_attempt_at) > now;
    // A held one goes when its line reaches it (per_object ordering): a retry does not jump the line.
    if (inFlight || row.status === 'held') return row;
    const update = { status: 'pending' as const, next_attempt_at: now, lease_owner: null, updated_at: now, ...(row.status === 'pending' ? {} : { retries_left: 0 }) };
    await trx('webhook_deliveries').update(update).where({ id: row.id });
    return { ...row, ...update };
  });
}

/** One delivery of a subscription with every attempt, newest first: what was sent, when, and what came back. */
async function findDeliveryWithAttempts(db: Knex, subscriptionId: string, deliveryId: string) {
  if (!isIdOf('dlv_', deliveryId)) throw deliveryNotFound(deliveryId);
  const row = (await db('webhook_deliveries').first().where({ id: deliveryId, subscription_id: subscriptionId })) as DeliveryRow | undefined;
  if (!row) throw deliveryNotFound(deliveryId);
  const attempts = (await db('webhook_attempts')
    .select('attempt', 'started_at', 'duration_ms', 'response_status', 'response_excerpt', 'error')
    .where({ delivery_id: row.id })
    .orderBy([{ column: 'attempt', order: 'desc' }, { column: 'id', order: 'desc' }])) as Array<Record<string, unknown>>;
  const delivery = toDelivery(row, row.status === 'held' ? ((await heads(db, [row])).get(row.id) ?? null) : null);
  // docs/reference.md section 11: here `attempts` is the list itself (its length is the count the log shows).
  return {
    ...delivery,
    attempts: attempts.map((a) => ({
      attempt: asNumber(a.attempt),
      attempted_at: iso(a.started_at),
      duration_ms: asNumber(a.duration_ms),
      response_status: asNullableNumber(a.response_status),
      error: (a.error as string | null) ?? null,
      response_excerpt: (a.response_excerpt as string | null) ?? null,
    })),
  };
}

export async function sendTestEvent(deps: WebhookDeps, who: Who, id: string) {
  const subscription = await findSubscription(deps.db, who.workspace.id, id);
  await requireWebhookPlan(deps.db, who.workspace);
  const delivery = await createTestDelivery(deps.db, subscription, deps.config.webhookRetryDelays.length, deps.clock.now());
  deps.notifier.notify();
  return toDelivery(delivery);
}

export async function listWebhookDeliveries(deps: WebhookDeps, who: Who, id: string, query: { limit: number; cursor?: string; status?: string }) {
  const subscription = await findSubscription(deps.db, who.workspace.id, id);
  return listDeliveries(deps.db, subscription.id, query);
}

export async function getWebhookDelivery(deps: WebhookDeps, who: Who, id: string, deliveryId: string) {
  const subscription = await findSubscription(deps.db, who.workspace.id, id);
  return findDeliveryWithAttempts(deps.db, subscription.id, deliveryId);
}

export async function retryWebhookDelivery(deps: WebhookDeps, who: Who, id: string, deliveryId: string) {
  const subscription = await findSubscription(deps.db, who.workspace.id, id);
  await requireWebhookPlan(deps.db, who.workspace);
  const delivery = await retryDelivery(deps.db, subscription.id, deliveryId, deps.clock.now());
  deps.notifier.notify();
  return toDelivery(delivery);
}
