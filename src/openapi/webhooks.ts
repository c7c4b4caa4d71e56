import type { JsonSchema } from '../kernel/define.js';
import { CREATE_SCHEMA, UPDATE_SCHEMA } from '../webhooks/schemas.js';
import { ref } from './operation.js';
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
