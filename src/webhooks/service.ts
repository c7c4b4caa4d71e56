import type { Knex } from 'knex';
import type { Keyring } from '../secrets/keyring.js';
import type { Who } from '../common/who.js';
import { findPlan } from '../auth/keys.js';
import { allowsWebhooks } from '../auth/plans.js';
import type { Config } from '../common/config.js';
import type { Clock } from '../common/clock.js';
import { ApiError, type ErrorItem } from '../common/errors.js';
import type { EventInfo } from '../events/catalog.js';
import type { Notifier } from '../events/notify.js';
import { patternErrors } from '../events/patterns.js';
import { createTestDelivery, findDeliveryWithAttempts, listDeliveries, retryDelivery, toDelivery } from './deliveries.js';
import { recoverDeliveries } from './recover.js';
import { bareHost, checkHost, DestinationError, schemeError, type Resolve } from './ssrf.js';
import { createSubscription, deleteSubscription, findSubscription, listSubscriptions, rotateSecret, toSubscription, updateSubscription, type SubscriptionChanges } from './subscriptions.js';

/**
 * The subscription operations of API.md section 8 as plain functions over (deps, workspace,
 * input): they return data or throw ApiError, and never see HTTP. Both doors (the public API
 * with a key, the internal one with a session) call these.
 */
export interface WebhookDeps {
  db: Knex;
  clock: Clock;
  notifier: Notifier;
  /** Seals the signing secrets it stores. */
  secrets: Keyring;
  config: Pick<Config, 'webhookAllowPrivate' | 'webhookRetryDelays'>;
  resolve: Resolve;
  catalog: readonly EventInfo[];
}

export interface Workspace {
  id: string;
  plan: string;
}


/** What to do about a refused URL when the receiver is a local one, as it is while trying webhooks out. */
const LOCAL_HINT = 'to test with a receiver on this machine or a private network, the operator sets WEBHOOK_ALLOW_PRIVATE=true (development only)';

function withHint(deps: WebhookDeps, message: string): string {
  return deps.config.webhookAllowPrivate ? message : `${message}; ${LOCAL_HINT}`;
}

/** The URL's scheme and the patterns, then (if the scheme is fine) where the URL leads. */
async function checkInput(deps: WebhookDeps, body: { url?: string; events?: string[] }): Promise<void> {
  const errors: ErrorItem[] = [];
  let target: URL | undefined;
  if (body.url !== undefined) {
    target = new URL(body.url);
    const scheme = schemeError(target, deps.config.webhookAllowPrivate);
    if (scheme) errors.push({ pointer: '/url', message: withHint(deps, scheme) });
    else if (target.hash) errors.push({ pointer: '/url', message: 'must not have a fragment' });
  }
  if (body.events !== undefined) errors.push(...patternErrors(body.events, deps.catalog));
  if (errors.length === 0 && target) {
    try {
      await checkHost(bareHost(target), deps.resolve, deps.config.webhookAllowPrivate);
    } catch (err) {
      if (!(err instanceof DestinationError)) throw err;
      errors.push({ pointer: '/url', message: withHint(deps, err.message) });
    }
  }
  if (errors.length > 0) throw new ApiError('validation_failed', `The subscription is invalid: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
}

/** Test deliveries and retries send: a plan without webhooks sends nothing. */
async function requireWebhookPlan(db: Knex, workspace: Workspace): Promise<void> {
  const plan = await findPlan(db, workspace.plan);
  if (!allowsWebhooks(plan)) throw new ApiError('plan_forbids_webhooks', `The ${workspace.plan} plan does not include webhooks.`);
}

export async function createWebhook(deps: WebhookDeps, who: Who, body: { url: string; events: string[]; description?: string | null; max_deliveries_per_second?: number | null }) {
  await checkInput(deps, body);
  const { row, secret } = await createSubscription(deps.db, deps.secrets, who.workspace.id, body, deps.clock.now(), who);
  return { ...toSubscription(row), secret };
}

export function listWebhooks(deps: WebhookDeps, who: Who, query: { limit: number; cursor?: string }) {
  return listSubscriptions(deps.db, who.workspace.id, query);
}

export async function getWebhook(deps: WebhookDeps, who: Who, id: string) {
  return toSubscription(await findSubscription(deps.db, who.workspace.id, id));
}

export async function updateWebhook(deps: WebhookDeps, who: Who, id: string, changes: SubscriptionChanges) {
  await checkInput(deps, changes);
  return toSubscription(await updateSubscription(deps.db, who.workspace.id, id, changes, deps.clock.now(), who));
}

export async function deleteWebhook(deps: WebhookDeps, who: Who, id: string): Promise<void> {
  await deleteSubscription(deps.db, who.workspace.id, id, deps.clock.now(), who);
}

export async function rotateWebhookSecret(deps: WebhookDeps, who: Who, id: string) {
  const { row, secret } = await rotateSecret(deps.db, deps.secrets, who.workspace.id, id, deps.clock.now(), who);
  return { ...toSubscription(row), secret };
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

/** API.md section 11: what the subscription missed in the window, sent (again). */
export async function recoverWebhook(deps: WebhookDeps, who: Who, id: string, body: { since: string; until?: string }) {
  const subscription = await findSubscription(deps.db, who.workspace.id, id);
  await requireWebhookPlan(deps.db, who.workspace);
  const now = deps.clock.now();
  const since = Date.parse(body.since);
  const until = body.until !== undefined ? Date.parse(body.until) : now;
  if (!(since < until)) throw new ApiError('validation_failed', 'since must be before until.', { errors: [{ pointer: '/since', message: 'must be before until' }] });
  if (!subscription.enabled) {
    throw new ApiError('subscription_disabled', 'The subscription is disabled: recovery sends to it, so enable it first (PATCH {"enabled": true}), then recover.');
  }
  const deliveries = await recoverDeliveries(deps.db, subscription, { since, until }, deps.config.webhookRetryDelays.length, now);
  if (deliveries > 0) deps.notifier.notify();
  return { deliveries };
}
