import { splitCredentials } from './credentials.js';
import type { Payload } from './payloads.js';
import type { Ordering } from './ordering.js';
import type { Knex } from 'knex';
import { asBoolean, asNullableNumber, asNumber } from '../db/decode.js';
import { findPlan, lockWorkspace } from '../auth/keys.js';
import { allowsWebhooks } from '../auth/plans.js';
import { transaction } from '../db/dialects/index.js';
import { ApiError } from '../common/errors.js';
import { isIdOf, newId } from '../common/ids.js';
import { isLiveWorkspace } from '../common/modes.js';
import { keysetPage } from '../kernel/query/index.js';
import { iso } from '../db/iso.js';
import { newSecret, publicKeyOf, type SignatureKind } from './signing.js';
import type { Keyring } from '../secrets/keyring.js';
import { recordAudit } from '../audit/log.js';
import type { Who } from '../common/who.js';
import type { Config } from '../common/config.js';
import type { Clock } from '../common/clock.js';
import type { EventInfo } from '../events/catalog.js';
import type { Notifier } from '../events/notify.js';
import { checkSubscriptionInput } from './destination.js';
import type { Resolve } from './ssrf.js';

/**
 * What the subscription operations of docs/reference.md section 8 work with. They take (deps, who, input),
 * return what clients see or throw ApiError, and never see HTTP: both doors (the public API
 * with a key, the internal one with a session) call them.
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
  /** The API versions a subscription may render its deliveries in, and the one it gets by default. */
  versions: { readonly known: readonly string[]; readonly latest: string };
  /** The version a new subscription gets when it names none: the making key's (the latest from a session). */
  defaultVersion: string;
}

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export interface SubscriptionRow {
  id: string;
  workspace_id: string;
  url: string;
  events: string;
  description: string | null;
  enabled: boolean | number;
  max_deliveries_per_second: number | null;
  payload: string;
  api_version: string;
  /** How its deliveries about one object are ordered (webhooks/ordering.ts). */
  ordering: string;
  signature: string;
  public_key: string | null;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | string | null;
  failing_since: number | string | null;
  failing_reported_at?: number | string | null;
  /** A broker URL's password, sealed (webhooks/credentials.ts); null when it has none. */
  url_password?: string | null;
  created_at: number | string;
  updated_at: number | string;
  deleted_at: number | string | null;
}

/** A subscription as clients see it: never its secret (that is shown once, by the caller). */
export function toSubscription(row: SubscriptionRow) {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    enabled: asBoolean(row.enabled) === true,
    max_deliveries_per_second: asNullableNumber(row.max_deliveries_per_second),
    payload: row.payload as Payload,
    api_version: row.api_version,
    ordering: row.ordering as Ordering,
    signature: row.signature as SignatureKind,
    public_key: row.public_key,
    disabled_reason: row.disabled_reason,
    failing_since: iso(row.failing_since),
    failing_reported_at: iso(row.failing_reported_at ?? null),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    livemode: isLiveWorkspace(row.workspace_id),
  };
}

/** The events table's row of an event about a subscription (`webhook.test`, `webhook.failing`, `webhook.disabled`): its object, the subscription as it stands. */
export function subscriptionEvent(type: string, row: SubscriptionRow, now: number) {
  const id = newId('evt_');
  const payload = JSON.stringify({ id, type, created_at: iso(now), livemode: isLiveWorkspace(row.workspace_id), data: { object: toSubscription(row), previous: {} } });
  return { id, workspace_id: row.workspace_id, type, object_id: row.id, payload, created_at: now };
}

const live = (db: Knex | Knex.Transaction, workspaceId: string) => db('webhook_subscriptions').where({ workspace_id: workspaceId }).whereNull('deleted_at');

export function notFound(id: string): ApiError {
  return new ApiError('not_found', `No webhook subscription with id ${id}.`);
}

export async function findSubscription(db: Knex | Knex.Transaction, workspaceId: string, id: string, forUpdate = false): Promise<SubscriptionRow> {
  if (!isIdOf('wh_', id)) throw notFound(id);
  const q = live(db, workspaceId).first().where({ id });
  const row = (await (forUpdate ? q.forUpdate() : q)) as SubscriptionRow | undefined;
  if (!row) throw notFound(id);
  return row;
}

/** Test deliveries, retries and recoveries send: a plan without webhooks sends nothing. */
export async function requireWebhookPlan(db: Knex, workspace: { plan: string }): Promise<void> {
  const plan = await findPlan(db, workspace.plan);
  if (!allowsWebhooks(plan)) throw new ApiError('plan_forbids_webhooks', `The ${workspace.plan} plan does not include webhooks.`);
}

/** The first millisecond of the UTC calendar month holding `now`. */
export function monthStart(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export interface NewSubscription {
  url: string;
  events: string[];
  description?: string | null;
  max_deliveries_per_second?: number | null;
  payload?: Payload;
  signature?: SignatureKind;
  api_version?: string;
  ordering?: Ordering;
}

/**
 * Creates a subscription within the plan's rules: none on a plan without webhooks, at most
 * `webhooks_per_month` created per UTC calendar month (deleted ones count). The workspace row
 * is locked so two concurrent creations cannot both take the last one.
 */
export async function createWebhook(deps: WebhookDeps, who: Who, input: NewSubscription) {
  await checkSubscriptionInput(deps, input);
  const { db, secrets: keyring } = deps;
  const workspaceId = who.workspace.id;
  const now = deps.clock.now();
  return transaction(db, async (trx) => {
    const workspace = await lockWorkspace<{ id: string; plan: string }>(trx, workspaceId, ['plan']);
    const plan = workspace ? await findPlan(trx, workspace.plan) : undefined;
    if (!allowsWebhooks(plan)) {
      throw new ApiError('plan_forbids_webhooks', `The ${workspace?.plan ?? 'current'} plan does not include webhooks.`);
    }
    const made = (await trx('webhook_subscriptions').where({ workspace_id: workspaceId }).where('created_at', '>=', monthStart(now)).count({ n: '*' }).first()) as { n: number | string };
    if (asNumber(made.n) >= plan.webhooks_per_month) {
      throw new ApiError('webhook_limit_reached', `The ${plan.name} plan allows ${plan.webhooks_per_month} webhook subscriptions created per calendar month (UTC), deleted ones included; this month's are used.`);
    }
    const kind = input.signature ?? 'hmac';
    const destination = splitCredentials(input.url);
    const secret = newSecret(kind);
    const id = newId('wh_');
    const row: SubscriptionRow = {
      id,
      workspace_id: workspaceId,
      url: destination.url,
      events: JSON.stringify(input.events),
      description: input.description ?? null,
      enabled: true,
      max_deliveries_per_second: input.max_deliveries_per_second ?? null,
      payload: input.payload ?? 'full',
      api_version: input.api_version ?? deps.defaultVersion,
      ordering: input.ordering ?? 'none',
      signature: kind,
      public_key: publicKeyOf(secret),
      url_password: destination.password === null ? null : keyring.seal(destination.password, id),
      disabled_reason: null,
      secret: keyring.seal(secret, id),
      previous_secret: null,
      previous_secret_until: null,
      failing_since: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await trx('webhook_subscriptions').insert(row);
    await recordAudit(trx, who, { workspaceId, action: 'webhook.created', target: { type: 'webhook', id: row.id }, details: { url: row.url, events: input.events } }, now);
    return { ...toSubscription(row), secret: shownSecret(kind, secret) };
  });
}

/** What creation and rotation show of a new secret: an HMAC secret once; never an Ed25519 private key (its public key is shown instead, always). */
const shownSecret = (kind: SignatureKind, secret: string) => (kind === 'hmac' ? secret : null);

/** A page of the workspace's subscriptions, newest first, without their secrets. */
export function listWebhooks(deps: WebhookDeps, who: Who, query: { limit: number; cursor?: string }) {
  return keysetPage(live(deps.db, who.workspace.id), query, { resource: 'webhook', sort: '-created_at' }, toSubscription);
}

export async function getWebhook(deps: WebhookDeps, who: Who, id: string) {
  return toSubscription(await findSubscription(deps.db, who.workspace.id, id));
}

export interface SubscriptionChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  max_deliveries_per_second?: number | null;
  payload?: Payload;
  api_version?: string;
  ordering?: Ordering;
  enabled?: boolean;
}

/** A partial update; turning a subscription on clears why it was off and its failure streak. */
export async function updateWebhook(deps: WebhookDeps, who: Who, id: string, changes: SubscriptionChanges) {
  await checkSubscriptionInput(deps, changes);
  const workspaceId = who.workspace.id;
  const now = deps.clock.now();
  const row = await transaction(deps.db, async (trx) => {
    const row = await findSubscription(trx, workspaceId, id, true);
    const update: Partial<SubscriptionRow> = {};
    if (changes.url !== undefined) {
      // A new URL replaces the old one whole: its password, or none.
      const destination = splitCredentials(changes.url);
      update.url = destination.url;
      update.url_password = destination.password === null ? null : deps.secrets.seal(destination.password, row.id);
    }
    if (changes.events !== undefined) update.events = JSON.stringify(changes.events);
    if (changes.description !== undefined) update.description = changes.description;
    if (changes.max_deliveries_per_second !== undefined) update.max_deliveries_per_second = changes.max_deliveries_per_second;
    if (changes.payload !== undefined) update.payload = changes.payload;
    if (changes.api_version !== undefined) update.api_version = changes.api_version;
    if (changes.ordering !== undefined) update.ordering = changes.ordering;
    if (changes.enabled !== undefined) {
      update.enabled = changes.enabled;
      // disabled_reason says why the service turned it off; it is null when the client did.
      Object.assign(update, { disabled_reason: null, failing_since: null });
    }
    if (Object.keys(update).length === 0) return row;
    update.updated_at = now;
    await trx('webhook_subscriptions').update(update).where({ id: row.id });
    await recordAudit(trx, who, { workspaceId, action: 'webhook.updated', target: { type: 'webhook', id: row.id }, details: { ...changes, ...(update.url !== undefined ? { url: update.url } : {}) } }, now);
    return { ...row, ...update };
  });
  return toSubscription(row);
}

/**
 * Deletes a subscription: it stops receiving at once and its delivery log goes with it. The
 * row stays, without its secrets, because it counts toward the month's allowance.
 */
export async function deleteWebhook(deps: WebhookDeps, who: Who, id: string): Promise<void> {
  const workspaceId = who.workspace.id;
  const now = deps.clock.now();
  await transaction(deps.db, async (trx) => {
    const row = await findSubscription(trx, workspaceId, id, true);
    await trx('webhook_deliveries').where({ subscription_id: row.id }).delete();
    await trx('webhook_subscriptions')
      .update({ deleted_at: now, updated_at: now, enabled: false, secret: '', previous_secret: null, previous_secret_until: null, url_password: null })
      .where({ id: row.id });
    await recordAudit(trx, who, { workspaceId, action: 'webhook.deleted', target: { type: 'webhook', id: row.id }, details: { url: row.url } }, now);
  });
}

/** A new secret (or Ed25519 key pair); the old one keeps signing beside it for 24 hours. */
export async function rotateWebhookSecret(deps: WebhookDeps, who: Who, id: string) {
  const { secrets: keyring } = deps;
  const workspaceId = who.workspace.id;
  const now = deps.clock.now();
  return transaction(deps.db, async (trx) => {
    const row = await findSubscription(trx, workspaceId, id, true);
    const kind = row.signature as SignatureKind;
    const secret = newSecret(kind);
    const update = { secret: keyring.seal(secret, row.id), public_key: publicKeyOf(secret), previous_secret: row.secret, previous_secret_until: now + ROTATION_GRACE_MS, updated_at: now };
    await trx('webhook_subscriptions').update(update).where({ id: row.id });
    await recordAudit(trx, who, { workspaceId, action: 'webhook.secret_rotated', target: { type: 'webhook', id: row.id } }, now);
    return { ...toSubscription({ ...row, ...update }), secret: shownSecret(kind, secret) };
  });
}

/**
 * The secrets that sign now, opened: the current one, and a rotated-out one within its grace
 * period. Throws SealError for a secret the keyring cannot open.
 */
export function signingSecrets(row: Pick<SubscriptionRow, 'id' | 'secret' | 'previous_secret' | 'previous_secret_until'>, now: number, keyring: Keyring): string[] {
  const secrets = [keyring.open(row.secret, row.id)];
  if (row.previous_secret && asNumber(row.previous_secret_until) > now) secrets.push(keyring.open(row.previous_secret, row.id));
  return secrets;
}
