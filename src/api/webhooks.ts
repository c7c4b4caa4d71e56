import { WEBHOOKS_SCOPE } from '../auth/scopes.js';
import { eventCatalog } from '../events/catalog.js';
import type { Registry } from '../kernel/registry/index.js';
import { type Route, route, type RouteInput, who } from '../http/route.js';
import { PAGE_PARAMETERS } from '../kernel/model/index.js';
import { ref } from '../openapi/operation.js';
import { header } from '../openapi/problems.js';
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, rotateWebhookSecret, updateWebhook, type WebhookDeps } from '../webhooks/subscriptions.js';
import { DELIVERY_STATUSES, getWebhookDelivery, listWebhookDeliveries, retryWebhookDelivery, sendTestEvent } from '../webhooks/deliveries.js';
import { recoverWebhook } from '../webhooks/recover.js';
import { CREATE_SCHEMA, RECOVER_SCHEMA, UPDATE_SCHEMA } from '../webhooks/schemas.js';
import { MODE_PARAMETER } from '../common/modes.js';

const DELIVERIES_QUERY = { type: 'object', additionalProperties: false, properties: { ...PAGE_PARAMETERS, status: { type: 'string', enum: [...DELIVERY_STATUSES] } } } as const;

const READ_ONLY = ['id', 'secret', 'created_at', 'updated_at', 'disabled_reason'];
const id = { id: { type: 'string', description: 'The subscription id (`wh_...`).' } };
const deliveryOf = { ...id, delivery_id: { type: 'string', description: 'The delivery id (`dlv_...`).' } };

/**
 * Who may use the subscription routes on one door: what reading needs and what changing needs
 * (a scope on the public API, a role on the internal one), and where the API lives (for Location).
 */
export interface WebhookDoor {
  base: string;
  read: string | null;
  change: string | null;
  /** The errors a refused caller gets: insufficient_scope or insufficient_role. */
  refused: 'insufficient_scope' | 'insufficient_role';
  /** Whether each route takes the `mode` parameter (the internal API: a key's mode is its own). */
  modes?: boolean;
}

/** The public door: every route behind the webhooks:manage scope. */
/** Where the public API lives. */
export const PUBLIC_BASE = '/v1';

export const PUBLIC_WEBHOOKS: WebhookDoor = { base: PUBLIC_BASE, read: WEBHOOKS_SCOPE, change: WEBHOOKS_SCOPE, refused: 'insufficient_scope' };

/**
 * The subscription API (docs/reference.md section 8): one set of routes over one set of services, mounted
 * behind both doors (the public API with a key, the internal one with a session).
 */
export function webhookRoutes(registry: Registry, door: WebhookDoor = PUBLIC_WEBHOOKS): Route[] {
  const catalog = eventCatalog(registry);
  // A subscription made with a key renders in the key's version unless it names one; from the administration area, in the latest.
  const depsOf = (input: RouteInput): WebhookDeps => ({ ...input.deps, catalog, defaultVersion: input.auth?.key.api_version ?? input.deps.versions.latest });
  const reads = { tag: 'webhooks', access: door.read };
  const changes = { tag: 'webhooks', access: door.change };
  const NOT_FOUND = ['invalid_parameter', door.refused, 'not_found'] as const;
  const subscriptionId = (input: RouteInput) => String(input.params.id);
  // Behind a session, every route works on the data of the mode it names (common/modes.ts).
  const modal = <P extends Record<string, unknown>>(properties: P) => ({ type: 'object', additionalProperties: false, properties: door.modes ? { ...properties, ...MODE_PARAMETER } : properties }) as const;
  const modeOnly = door.modes ? { query: modal({}) } : {};
  return [
    route({
      ...reads,
      method: 'get',
      path: '/webhooks',
      operationId: 'listWebhooks',
      summary: 'List webhook subscriptions',
      query: modal(PAGE_PARAMETERS),
      success: { status: 200, description: 'A page of subscriptions, without their secrets.', schema: ref('WebhookList') },
      errors: ['invalid_parameter', 'invalid_cursor', door.refused],
      handle: async (input) => ({ body: await listWebhooks(depsOf(input), who(input), input.query) }),
    }),
    route({
      ...changes,
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      summary: 'Subscribe to events',
      description:
        'The URL must be https and must not resolve to a loopback, private, link-local or reserved address (checked now and at every delivery). Each pattern must match the event catalog. The plan limits subscriptions created per UTC calendar month, deleted ones included.',
      ...modeOnly,
      body: { schema: CREATE_SCHEMA, ref: ref('WebhookCreate'), readOnly: READ_ONLY },
      success: { status: 201, description: 'The subscription and its secret, shown only here.', schema: ref('WebhookWithSecret'), headers: { Location: header('Location') } },
      errors: ['invalid_parameter', door.refused, 'plan_forbids_webhooks', 'webhook_limit_reached'],
      handle: async (input) => {
        const created = await createWebhook(depsOf(input), who(input), input.body);
        return { status: 201, headers: { Location: `${door.base}/webhooks/${created.id}` }, body: created };
      },
    }),
    {
      ...reads,
      method: 'get',
      path: '/webhooks/{id}',
      operationId: 'getWebhook',
      summary: 'Get a webhook subscription',
      pathParams: id,
      ...modeOnly,
      success: { status: 200, description: 'The subscription.', schema: ref('Webhook') },
      errors: NOT_FOUND,
      handle: async (input) => ({ body: await getWebhook(depsOf(input), who(input), subscriptionId(input)) }),
    },
    route({
      ...changes,
      method: 'patch',
      path: '/webhooks/{id}',
      operationId: 'updateWebhook',
      summary: 'Update a webhook subscription',
      description: 'Change its URL, patterns or description, or turn it off and on: `{"enabled": true}` turns back on a subscription the service disabled.',
      pathParams: id,
      ...modeOnly,
      body: { schema: UPDATE_SCHEMA, ref: ref('WebhookUpdate'), readOnly: READ_ONLY },
      success: { status: 200, description: 'The subscription after the change.', schema: ref('Webhook') },
      errors: NOT_FOUND,
      handle: async (input) => ({ body: await updateWebhook(depsOf(input), who(input), subscriptionId(input), input.body) }),
    }),
    {
      ...changes,
      method: 'delete',
      path: '/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook subscription',
      description: "Stops its deliveries. It still counts against the month's allowance.",
      pathParams: id,
      ...modeOnly,
      success: { status: 204, description: 'Deleted.' },
      errors: NOT_FOUND,
      handle: async (input) => {
        await deleteWebhook(depsOf(input), who(input), subscriptionId(input));
        return { status: 204 };
      },
    },
    {
      ...changes,
      method: 'post',
      path: '/webhooks/{id}/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate the signing secret',
      description: 'A new secret, shown only here. The old one keeps signing beside it for 24 hours, so `webhook-signature` carries both meanwhile.',
      pathParams: id,
      ...modeOnly,
      success: { status: 200, description: 'The subscription and its new secret.', schema: ref('WebhookWithSecret') },
      errors: NOT_FOUND,
      handle: async (input) => ({ body: await rotateWebhookSecret(depsOf(input), who(input), subscriptionId(input)) }),
    },
    {
      ...changes,
      method: 'post',
      path: '/webhooks/{id}/test',
      operationId: 'testWebhook',
      summary: 'Send a test event',
      description: 'Queues a `webhook.test` event for this subscription only, even when it is disabled.',
      pathParams: id,
      ...modeOnly,
      success: { status: 202, description: 'The new delivery.', schema: ref('Delivery') },
      errors: [...NOT_FOUND, 'plan_forbids_webhooks'],
      handle: async (input) => ({ status: 202, body: await sendTestEvent(depsOf(input), who(input), subscriptionId(input)) }),
    },
    route({
      ...changes,
      method: 'post',
      path: '/webhooks/{id}/recover',
      operationId: 'recoverWebhook',
      summary: 'Send what the subscription missed',
      description:
        'For the window [since, until): every failed delivery is sent again (with the full retry schedule), and every event the subscription selects that it has no delivery for (written while it was disabled) is delivered, with its original `webhook-id`. A delivery is never made twice, so recovering a window again sends only what failed since. Events are kept as long as the event log keeps them. The subscription must be enabled (409 `subscription_disabled`).',
      pathParams: id,
      ...modeOnly,
      body: { schema: RECOVER_SCHEMA, ref: ref('WebhookRecover') },
      success: { status: 202, description: 'How many deliveries were queued.', schema: ref('Recovery') },
      errors: [...NOT_FOUND, 'plan_forbids_webhooks', 'validation_failed', 'subscription_disabled'],
      handle: async (input) => ({ status: 202, body: await recoverWebhook(depsOf(input), who(input), subscriptionId(input), input.body) }),
    }),
    route({
      ...reads,
      method: 'get',
      path: '/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'The delivery log',
      pathParams: id,
      query: modal(DELIVERIES_QUERY.properties),
      success: { status: 200, description: 'A page of deliveries, newest first.', schema: ref('DeliveryList') },
      errors: [...NOT_FOUND, 'invalid_cursor'],
      handle: async (input) => ({ body: await listWebhookDeliveries(depsOf(input), who(input), subscriptionId(input), input.query) }),
    }),
    {
      ...reads,
      method: 'get',
      path: '/webhooks/{id}/deliveries/{delivery_id}',
      operationId: 'getWebhookDelivery',
      summary: 'A delivery and every attempt',
      description: 'The delivery, and in `attempts` each attempt (not their number, as in the delivery log), newest first: when it started, how long it took, the status the receiver answered (or the error) and the first 1 KiB of its answer.',
      pathParams: deliveryOf,
      ...modeOnly,
      success: { status: 200, description: 'The delivery with its attempts.', schema: ref('DeliveryWithAttempts') },
      errors: NOT_FOUND,
      handle: async (input) => ({ body: await getWebhookDelivery(depsOf(input), who(input), subscriptionId(input), String(input.params.delivery_id)) }),
    },
    {
      ...changes,
      method: 'post',
      path: '/webhooks/{id}/deliveries/{delivery_id}/retry',
      operationId: 'retryWebhookDelivery',
      summary: 'Retry a delivery now',
      description: 'A pending delivery is made due now; a finished one (succeeded or failed) gets exactly one more attempt.',
      pathParams: deliveryOf,
      ...modeOnly,
      success: { status: 202, description: 'The delivery, due now.', schema: ref('Delivery') },
      errors: [...NOT_FOUND, 'plan_forbids_webhooks'],
      handle: async (input) => ({ status: 202, body: await retryWebhookDelivery(depsOf(input), who(input), subscriptionId(input), String(input.params.delivery_id)) }),
    },
  ];
}
