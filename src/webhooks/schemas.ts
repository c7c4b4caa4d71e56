import { SIGNATURES } from './signing.js';
import { PAYLOADS } from './payloads.js';
import { ORDERINGS } from './ordering.js';
import { windowProperties } from '../common/window.js';

/** What a subscription's create and update take: the service's input, checked by whichever door it comes through. */
const url = { type: 'string', format: 'uri', maxLength: 2048, description: 'Where deliveries go: an https URL (POSTed; https://user:pass@host/... sends HTTP Basic authentication, the password never shown back), nats://host:port/<subject> (tls:// over TLS; published to NATS JetStream), or amqp://user:pass@host:port/[<vhost>/]<exchange> (amqps:// over TLS; published to a RabbitMQ exchange, the event type as routing key); a public address.' } as const;
const events = { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 100 }, description: 'Event names, "*", or "<resource>.*".' } as const;
const description = { type: ['string', 'null'], maxLength: 500 } as const;
const max_deliveries_per_second = { type: ['integer', 'null'], minimum: 1, maximum: 1000, description: 'At most this many deliveries a second to this subscription, from all workers together (1-1000; null: no limit). The rest wait, never dropped.' } as const;
const payload = { type: 'string', enum: [...PAYLOADS], description: 'What each delivery carries: `full` (default), the event with the object whole; `thin`, the event with `data.object` cut to `{ id, version }`, for a consumer that fetches the object itself.' } as const;
const signature = { type: 'string', enum: [...SIGNATURES], description: 'How deliveries are signed (set at creation): `hmac` (default), `v1,` with the secret shown once; `ed25519`, `v1a,` verified with the subscription\'s `public_key`.' } as const;
const api_version = {
  type: 'string',
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
  description: "The API version its deliveries are rendered (and signed) in, one of GET /versions. Left out on creation: the making key's version (the latest from the administration area).",
  examples: ['2026-11-21'],
} as const;
const ordering = {
  type: 'string',
  enum: [...ORDERINGS],
  description: "How its deliveries are ordered: `none` (default), each sent as soon as it can be; `per_object`, those about one object (the same `data.object.id`) attempted strictly in the order of the object's versions, each waiting (`held`) until the one before it succeeded or was given up.",
} as const;
export const CREATE_SCHEMA = { type: 'object', additionalProperties: false, required: ['url', 'events'], properties: { url, events, description, max_deliveries_per_second, payload, signature, api_version, ordering } } as const;
export const UPDATE_SCHEMA = { type: 'object', additionalProperties: false, properties: { url, events, description, max_deliveries_per_second, payload, api_version, ordering, enabled: { type: 'boolean' } } } as const;
/** What recovery takes: the window, by when the events and deliveries were made. */
export const RECOVER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['since'],
  properties: {
    ...windowProperties('From this time, included (RFC 3339).', 'Up to this time, excluded (RFC 3339). Default: now.'),
  },
} as const;
