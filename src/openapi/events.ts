import { eventCatalog } from '../events/catalog.js';
import type { JsonSchema } from '../kernel/model/index.js';
import type { Registry } from '../kernel/registry/index.js';
import { ref } from './operation.js';
import { pageSchema, pascal } from './resources.js';
import { inWords } from '../common/words.js';
import { idPattern } from '../common/ids.js';

const SIGNATURE = '^v1a?,[A-Za-z0-9+/]+={0,2}( v1a?,[A-Za-z0-9+/]+={0,2})*$';

/** The headers of every delivery (Standard Webhooks), as parameters of each webhook operation. */
export const DELIVERY_HEADERS: JsonSchema[] = [
  { name: 'webhook-id', in: 'header', required: true, description: 'The event id: the same on every retry, so a receiver can drop duplicates.', schema: { type: 'string', pattern: idPattern('evt_') } },
  { name: 'webhook-timestamp', in: 'header', required: true, description: 'Unix seconds of this attempt. Refuse deliveries far from your clock (Standard Webhooks libraries allow 5 minutes).', schema: { type: 'string', pattern: '^[0-9]+$' } },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Signatures of `<webhook-id>.<webhook-timestamp>.<raw body>`: `v1,<base64 HMAC-SHA256>` keyed with the base64-decoded part of the secret after `whsec_` (a subscription with signature `hmac`), or `v1a,<base64 Ed25519 signature>` verified with the subscription\'s `public_key`, the base64-decoded part after `whpk_` (signature `ed25519`). During a rotation, one signature per key, space-separated: accept the delivery if any verifies.',
    schema: { type: 'string', pattern: SIGNATURE },
  },
  { name: 'X-Service-Signature', in: 'header', required: true, description: 'The same value as webhook-signature.', schema: { type: 'string', pattern: SIGNATURE } },
  {
    name: 'traceparent',
    in: 'header',
    required: false,
    description: 'W3C Trace Context of this attempt, sent only when the service exports traces (OpenTelemetry): continue it in your own spans to see the delivery in the same trace as the request that caused the event.',
    schema: { type: 'string', pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' },
  },
];

/** What the service does with a delivery's answer, in the terms the running configuration sets. */
export interface DeliveryFacts {
  timeoutMs: number;
  /** Seconds between attempts; their count is the number of retries. */
  retryDelays: readonly number[];
}

/** 5 -> `5 s`, 300 -> `5 min`, 7200 -> `2 h`. */
function duration(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

function receiverAnswers(facts: DeliveryFacts): JsonSchema {
  return {
    '2XX': { description: `Delivered. Any 2xx within ${duration(facts.timeoutMs / 1000)} counts; redirects are not followed.` },
    '410': { description: 'Gone: the subscription is disabled, with `disabled_reason: gone`.' },
    '429': { description: 'Retried later, after Retry-After if given (seconds or an HTTP date).' },
    '503': { description: 'Retried later, after Retry-After if given (seconds or an HTTP date).' },
    default: { description: `Any other answer, a timeout or no connection: retried after ${inWords(facts.retryDelays.map(duration))} (±20%), then the delivery fails.` },
  };
}

const LIVEMODE: JsonSchema = { type: 'boolean', description: 'false for an event of test mode (an object of a test key): it reaches only subscriptions made in test mode.' };

/** The event envelope around one object schema. */
function envelope(type: string, object: JsonSchema, previous: JsonSchema): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'type', 'created_at', 'livemode', 'data'],
    properties: {
      id: { type: 'string', pattern: idPattern('evt_') },
      type: { type: 'string', const: type },
      created_at: { type: 'string', format: 'date-time' },
      livemode: LIVEMODE,
      data: {
        type: 'object',
        additionalProperties: false,
        required: ['object', 'previous'],
        properties: { object, previous },
      },
    },
  };
}

/**
 * The thin form of an event (a subscription with `payload: "thin"`): `data.object` cut to its
 * id, and its version for an object of a resource (webhooks/payloads.ts).
 */
function thin(type: string, versioned: boolean): JsonSchema {
  const object: JsonSchema = {
    type: 'object',
    additionalProperties: false,
    required: versioned ? ['id', 'version'] : ['id'],
    properties: { id: { type: 'string' }, ...(versioned ? { version: { type: 'integer', minimum: 1 } } : {}) },
    description: versioned ? 'The object\'s id and version: fetch it for the rest (or drop the event if you already have a later version).' : 'The subscription\'s id.',
  };
  return {
    type: 'object',
    additionalProperties: false,
    description: 'The thin payload, for a subscription with payload: "thin".',
    required: ['id', 'type', 'created_at', 'livemode', 'data'],
    properties: {
      id: { type: 'string', pattern: idPattern('evt_') },
      type: { type: 'string', const: type },
      created_at: { type: 'string', format: 'date-time' },
      livemode: LIVEMODE,
      data: { type: 'object', additionalProperties: false, required: ['object'], properties: { object } },
    },
  };
}

/** A delivery's body: the event whole (payload "full", the default) or thin. */
const eitherPayload = (full: JsonSchema, type: string, versioned: boolean): JsonSchema => ({ anyOf: [full, thin(type, versioned)] });

/** Per resource: `<Name>Changes`, the old values of the fields a write changed. */
export function eventSchemas(registry: Registry): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = {};
  for (const { def } of registry.resources) {
    schemas[`${pascal(def.name)}Changes`] = {
      type: 'object',
      description: `The old values of the fields the write changed ({} on create and delete).`,
      additionalProperties: false,
      properties: def.fields,
    };
  }
  return schemas;
}

/** The event log's event (any type of the catalog; each type's exact payload is under `webhooks`) and its page. */
export function eventLogSchemas(registry: Registry): Record<string, JsonSchema> {
  const event = envelope('', { type: 'object', description: 'The object after the change, as the resource reads.' }, { type: 'object', description: 'The old values of the fields the change changed.' });
  const properties = event.properties as Record<string, JsonSchema>;
  properties.type = { type: 'string', enum: eventCatalog(registry).map((e) => e.name), description: 'The event type; its exact payload is described under `webhooks`.' };
  return {
    Event: { ...event, description: 'An event, exactly as it was delivered to webhooks.' },
    EventLogPage: pageSchema(ref('Event'), 'A page of the event log.'),
  };
}

function delivery(type: string, summary: string, description: string, payload: JsonSchema, answers: JsonSchema): JsonSchema {
  return {
    post: {
      operationId: `on${type.split('.').map(pascal).join('')}`,
      summary,
      description,
      tags: ['events'],
      security: [],
      parameters: DELIVERY_HEADERS,
      requestBody: { required: true, content: { 'application/json': { schema: payload } } },
      responses: answers,
    },
  };
}

/** Every event of the catalog (and the test event) as an OpenAPI 3.1 webhook: payload and signature headers. */
export function webhooks(registry: Registry, facts: DeliveryFacts): Record<string, JsonSchema> {
  const result: Record<string, JsonSchema> = {};
  const answers = receiverAnswers(facts);
  for (const event of eventCatalog(registry)) {
    if (event.resource === 'webhooks') {
      result[event.name] = delivery(event.name, event.description, `${event.description} \`data.object\`: the subscription as it now stands; sent to the workspace's other subscriptions whose events include it. To a subscription with \`payload: "thin"\`, \`data\` is only \`{ "object": { "id" } }\`.`, eitherPayload(envelope(event.name, ref('Webhook'), { type: 'object', additionalProperties: false, maxProperties: 0 }), event.name, false), answers);
      continue;
    }
    const [name = ''] = event.name.split('.');
    const resource = pascal(name);
    const object = event.name.endsWith('.deleted') ? `the ${name} as it was before the delete.` : `the ${name} after the change.`;
    result[event.name] = delivery(event.name, event.description, `${event.description} \`data.object\`: ${object} \`data.previous\`: the changed fields' old values. To a subscription with \`payload: "thin"\`, \`data\` is only \`{ "object": { "id", "version" } }\`.`, eitherPayload(envelope(event.name, ref(resource), ref(`${resource}Changes`)), event.name, true), answers);
  }
  result['webhook.test'] = delivery(
    'webhook.test',
    'A test event',
    'Sent by POST /v1/webhooks/{id}/test to that subscription only; `data.object` is the subscription.',
    eitherPayload(envelope('webhook.test', ref('Webhook'), { type: 'object', additionalProperties: false, maxProperties: 0 }), 'webhook.test', false),
    answers,
  );
  return result;
}
