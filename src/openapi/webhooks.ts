import { WEBHOOKS_SCOPE } from '../auth/scopes.js';
import { CREATE_SCHEMA, DELIVERIES_QUERY, LIST_QUERY, UPDATE_SCHEMA } from '../http/routes/webhooks.js';
import type { JsonSchema } from '../kernel/define.js';
import { EMPTY_QUERY_SCHEMA } from '../kernel/schemas.js';
import { operation, ref, type OperationSpec } from './operation.js';
import { header, type ProblemResponses } from './problems.js';
import { pageSchema } from './resources.js';

const time = (description: string, nullable = false): JsonSchema => ({ type: nullable ? ['string', 'null'] : 'string', format: 'date-time', description });

const subscriptionProperties: Record<string, JsonSchema> = {
  id: { type: 'string', pattern: '^wh_[0-9a-z]+$' },
  url: { type: 'string', format: 'uri' },
  events: { type: 'array', items: { type: 'string' }, description: 'Patterns: an event name, `*`, or `<resource>.*`.' },
  description: { type: ['string', 'null'] },
  enabled: { type: 'boolean' },
  disabled_reason: { type: ['string', 'null'], enum: ['gone', 'failing', null], description: 'Why the service turned it off: the receiver answered 410 (`gone`) or every attempt failed for 5 days (`failing`); null otherwise.' },
  created_at: time('When it was created.'),
  updated_at: time('When it last changed.'),
};

const subscription = (properties: Record<string, JsonSchema>, description: string): JsonSchema => ({
  type: 'object',
  description,
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});

export const WEBHOOK_SCHEMAS: Record<string, JsonSchema> = {
  Webhook: subscription(subscriptionProperties, 'A webhook subscription. Its secret is never shown again after creation or rotation.'),
  WebhookWithSecret: subscription(
    { ...subscriptionProperties, secret: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/=]+$', description: 'Signs the deliveries. Shown only in this answer: keep it.' } },
    'A webhook subscription with its new signing secret.',
  ),
  WebhookCreate: CREATE_SCHEMA,
  WebhookUpdate: UPDATE_SCHEMA,
  WebhookList: pageSchema(ref('Webhook'), 'A page of webhook subscriptions, newest first.'),
  Delivery: {
    type: 'object',
    description: 'One event on its way to one subscription.',
    additionalProperties: false,
    required: ['id', 'webhook_id', 'event_id', 'event_type', 'status', 'attempts', 'last_response_status', 'last_error', 'next_attempt_at', 'created_at', 'delivered_at'],
    properties: {
      id: { type: 'string', pattern: '^dlv_[0-9a-z]+$' },
      webhook_id: { type: 'string', pattern: '^wh_[0-9a-z]+$' },
      event_id: { type: 'string', pattern: '^evt_[0-9a-z]+$', description: 'Also the webhook-id header of every attempt.' },
      event_type: { type: 'string' },
      status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
      attempts: { type: 'integer', minimum: 0 },
      last_response_status: { type: ['integer', 'null'], description: "The receiver's last HTTP status; null if it never answered." },
      last_error: { type: ['string', 'null'], description: 'Why the last attempt failed, if it did.' },
      next_attempt_at: time('When the next attempt is due; null unless pending.', true),
      created_at: time('When the delivery was created.'),
      delivered_at: time('When a 2xx arrived; null until then.', true),
    },
  },
  DeliveryList: pageSchema(ref('Delivery'), 'A page of deliveries, newest first.'),
};

const id = { id: { type: 'string', description: 'The subscription id (`wh_...`).' } };
const NOT_FOUND = ['invalid_parameter', 'insufficient_scope', 'not_found'] as const;

/** The subscription API (API.md section 8), every operation behind webhooks:manage. */
export function webhookPaths(problems: ProblemResponses): Record<string, JsonSchema> {
  const op = (spec: OperationSpec) => operation(spec, problems);
  const base = { tag: 'webhooks', scope: WEBHOOKS_SCOPE };
  return {
    '/webhooks': {
      get: op({
        ...base,
        operationId: 'listWebhooks',
        summary: 'List webhook subscriptions',
        query: LIST_QUERY,
        success: { status: 200, description: 'A page of subscriptions, without their secrets.', schema: ref('WebhookList') },
        errors: ['invalid_parameter', 'invalid_cursor', 'insufficient_scope'],
      }),
      post: op({
        ...base,
        operationId: 'createWebhook',
        summary: 'Subscribe to events',
        description:
          'The URL must be https and must not resolve to a loopback, private, link-local or reserved address (checked now and at every delivery). Each pattern must match the event catalog. The plan limits subscriptions created per UTC calendar month, deleted ones included.',
        body: ref('WebhookCreate'),
        success: { status: 201, description: 'The subscription and its secret, shown only here.', schema: ref('WebhookWithSecret'), headers: { Location: header('Location') } },
        errors: ['invalid_parameter', 'insufficient_scope', 'plan_forbids_webhooks', 'webhook_limit_reached'],
      }),
    },
    '/webhooks/{id}': {
      get: op({ ...base, operationId: 'getWebhook', summary: 'Get a webhook subscription', pathParams: id, query: EMPTY_QUERY_SCHEMA, success: { status: 200, description: 'The subscription.', schema: ref('Webhook') }, errors: NOT_FOUND }),
      patch: op({
        ...base,
        operationId: 'updateWebhook',
        summary: 'Update a webhook subscription',
        description: 'Change its URL, patterns or description, or turn it off and on: `{"enabled": true}` turns back on a subscription the service disabled.',
        pathParams: id,
        body: ref('WebhookUpdate'),
        success: { status: 200, description: 'The subscription after the change.', schema: ref('Webhook') },
        errors: NOT_FOUND,
      }),
      delete: op({ ...base, operationId: 'deleteWebhook', summary: 'Delete a webhook subscription', description: 'Stops its deliveries. It still counts against the month\'s allowance.', pathParams: id, success: { status: 204, description: 'Deleted.' }, errors: NOT_FOUND }),
    },
    '/webhooks/{id}/rotate-secret': {
      post: op({
        ...base,
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret',
        description: 'A new secret, shown only here. The old one keeps signing beside it for 24 hours, so `webhook-signature` carries both meanwhile.',
        pathParams: id,
        success: { status: 200, description: 'The subscription and its new secret.', schema: ref('WebhookWithSecret') },
        errors: NOT_FOUND,
      }),
    },
    '/webhooks/{id}/test': {
      post: op({
        ...base,
        operationId: 'testWebhook',
        summary: 'Send a test event',
        description: 'Queues a `webhook.test` event for this subscription only, even when it is disabled.',
        pathParams: id,
        success: { status: 202, description: 'The new delivery.', schema: ref('Delivery') },
        errors: [...NOT_FOUND, 'plan_forbids_webhooks'],
      }),
    },
    '/webhooks/{id}/deliveries': {
      get: op({
        ...base,
        operationId: 'listWebhookDeliveries',
        summary: 'The delivery log',
        pathParams: id,
        query: DELIVERIES_QUERY,
        success: { status: 200, description: 'A page of deliveries, newest first.', schema: ref('DeliveryList') },
        errors: [...NOT_FOUND, 'invalid_cursor'],
      }),
    },
    '/webhooks/{id}/deliveries/{delivery_id}/retry': {
      post: op({
        ...base,
        operationId: 'retryWebhookDelivery',
        summary: 'Retry a delivery now',
        description: 'A pending delivery is made due now; a finished one (succeeded or failed) gets exactly one more attempt.',
        pathParams: { ...id, delivery_id: { type: 'string', description: 'The delivery id (`dlv_...`).' } },
        success: { status: 202, description: 'The delivery, due now.', schema: ref('Delivery') },
        errors: [...NOT_FOUND, 'plan_forbids_webhooks'],
      }),
    },
  };
}
