import type { JsonSchema } from '../kernel/model/index.js';
import { CREATE_SCHEMA, RECOVER_SCHEMA, UPDATE_SCHEMA } from '../webhooks/schemas.js';
import { obj } from './meta.js';
import { ref } from './operation.js';
import { pageSchema } from './resources.js';
import { idPattern } from '../common/ids.js';

/** An RFC 3339 time, or null when `nullable`. */
export const time = (description: string, nullable = false): JsonSchema => ({ type: nullable ? ['string', 'null'] : 'string', format: 'date-time', description });

const subscriptionProperties: Record<string, JsonSchema> = {
  id: { type: 'string', pattern: idPattern('wh_') },
  url: { type: 'string', format: 'uri' },
  events: { type: 'array', items: { type: 'string' }, examples: [['deal.*', 'invoice.paid']], description: 'Patterns: an event name, `*`, or `<resource>.*`.' },
  description: { type: ['string', 'null'] },
  enabled: { type: 'boolean' },
  max_deliveries_per_second: { type: ['integer', 'null'], minimum: 1, maximum: 1000, description: 'The most deliveries a second this subscription gets (all workers together); null: no limit.' },
  payload: { type: 'string', enum: ['full', 'thin'], description: 'What each delivery carries: `full`, the event with the object whole; `thin`, the event with `data.object` cut to `{ id, version }`.' },
  api_version: { type: 'string', format: 'date', description: 'The API version its deliveries are rendered in (and signed as rendered).', examples: ['2026-11-21'] },
  ordering: { type: 'string', enum: ['none', 'per_object'], description: "`per_object`: its deliveries about one object are attempted in the order of the object's versions, each `held` until the one before it succeeded or was given up; `none`: no order." },
  signature: { type: 'string', enum: ['hmac', 'ed25519'], description: 'How deliveries are signed: `hmac` (`v1,`, with the secret) or `ed25519` (`v1a,`, verified with `public_key`).' },
  public_key: { type: ['string', 'null'], pattern: '^whpk_[A-Za-z0-9+/=]+$', description: 'For an ed25519 subscription, the key that verifies its deliveries (Standard Webhooks `whpk_`); null for hmac.' },
  failing_since: time('When its current run of failed attempts began; null while its last attempt succeeded.', true),
  failing_reported_at: time('When webhook.failing was last emitted about it (at least half of its last 20 deliveries failed); null if never.', true),
  disabled_reason: { type: ['string', 'null'], enum: ['gone', 'failing', null], description: 'Why the service turned it off: the receiver answered 410 (`gone`) or every attempt failed for 5 days (`failing`); null otherwise.' },
  created_at: time('When it was created.'),
  updated_at: time('When it last changed.'),
  livemode: { type: 'boolean', description: 'The mode of the key or page that made it: a test subscription (false) gets only test events, a live one only live events.' },
};

const deliveryProperties: Record<string, JsonSchema> = {
  id: { type: 'string', pattern: idPattern('dlv_') },
  webhook_id: { type: 'string', pattern: idPattern('wh_') },
  event_id: { type: 'string', pattern: idPattern('evt_'), description: 'Also the webhook-id header of every attempt.' },
  event_type: { type: 'string' },
  status: { type: 'string', enum: ['pending', 'held', 'succeeded', 'failed'], description: '`held`: waiting behind an earlier delivery about the same object (a per_object subscription).' },
  attempts: { type: 'integer', minimum: 0, description: 'How many attempts were made.' },
  last_response_status: { type: ['integer', 'null'], description: "The receiver's last HTTP status; null if it never answered." },
  last_error: { type: ['string', 'null'], description: 'Why the last attempt failed, if it did.' },
  next_attempt_at: time('When the next attempt is due; null unless pending.', true),
  created_at: time('When the delivery was created.'),
  delivered_at: time('When a 2xx arrived; null until then.', true),
  held_behind: { type: ['string', 'null'], pattern: idPattern('dlv_'), description: 'For a held delivery, the delivery about the same object being attempted now, that it waits behind (null while the event before it is still being fanned out); null unless held.' },
  livemode: { type: 'boolean', description: 'false for a delivery of a test event (to a test subscription).' },
};

const attempt: JsonSchema = {
  type: 'object',
  description: 'One attempt to deliver.',
  additionalProperties: false,
  required: ['attempt', 'attempted_at', 'duration_ms', 'response_status', 'error', 'response_excerpt'],
  properties: {
    attempt: { type: 'integer', minimum: 1, description: 'Its number: 1 for the first.' },
    attempted_at: time('When it started.'),
    duration_ms: { type: 'integer', minimum: 0, description: 'Until the answer (or the failure).' },
    response_status: { type: ['integer', 'null'], description: "The receiver's HTTP status; null if it never answered." },
    error: { type: ['string', 'null'], description: 'Why it failed (a non-2xx status, a timeout, a refused address ...); null on success.' },
    response_excerpt: { type: ['string', 'null'], maxLength: 1024, description: "The first 1 KiB of the receiver's answer; null if it never answered." },
  },
};

export const WEBHOOK_SCHEMAS: Record<string, JsonSchema> = {
  Webhook: obj(subscriptionProperties, 'A webhook subscription. Its secret is never shown again after creation or rotation.'),
  WebhookWithSecret: obj(
    { ...subscriptionProperties, secret: { type: ['string', 'null'], pattern: '^whsec_[A-Za-z0-9+/=]+$', description: 'Signs the deliveries (hmac). Shown only in this answer: keep it. null for an ed25519 subscription, whose private key is never shown: verify with public_key.' } },
    'A webhook subscription with its new signing secret.',
  ),
  WebhookCreate: CREATE_SCHEMA,
  WebhookUpdate: UPDATE_SCHEMA,
  WebhookRecover: RECOVER_SCHEMA,
  Recovery: obj({ deliveries: { type: 'integer', minimum: 0, description: 'How many deliveries were made due: failed ones sent again, and missed events.' } }, 'What recovery queued.'),
  WebhookList: pageSchema(ref('Webhook'), 'A page of webhook subscriptions, newest first.'),
  Delivery: obj(deliveryProperties, 'One event on its way to one subscription.'),
  DeliveryList: pageSchema(ref('Delivery'), 'A page of deliveries, newest first.'),
  DeliveryWithAttempts: obj(
    { ...deliveryProperties, attempts: { type: 'array', items: attempt, description: 'Every attempt, newest first (in the delivery log, `attempts` is their number).' } },
    'A delivery and every attempt.',
  ),
};
