import type { JsonSchema } from '../kernel/define.js';
import { EMPTY_QUERY_SCHEMA } from '../kernel/schemas.js';
import { WINDOW_MS } from '../ratelimit/window.js';
import { operation, ref, type OperationSpec } from './operation.js';
import type { ProblemResponses } from './problems.js';

const str = { type: 'string' };
const int = (minimum: number) => ({ type: 'integer', minimum });
const obj = (properties: Record<string, JsonSchema>, description?: string): JsonSchema => ({
  type: 'object',
  ...(description ? { description } : {}),
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});

export const META_SCHEMAS: Record<string, JsonSchema> = {
  Health: obj(
    {
      status: { type: 'string', const: 'ok' },
      key: obj({ id: str, name: str, prefix: str, scopes: { type: 'array', items: str }, rate_limit: int(1) }, 'The calling key.'),
      workspace: obj({ id: str, name: str, plan: str }, "The key's workspace."),
      rate_limit: obj({ limit: int(1), remaining: int(0), reset: int(0), window_seconds: { type: 'integer', const: WINDOW_MS / 1000 } }, "The key's window after this request."),
    },
    'The service is up, and who is calling.',
  ),
  ScopeList: obj({
    data: {
      type: 'array',
      items: obj({
        name: { type: 'string', examples: ['read:deals'] },
        resource: str,
        access: { type: 'string', enum: ['read', 'write', 'manage'] },
        description: str,
        granted: { type: 'boolean', description: 'Whether the calling key holds this scope (and its plan allows it).' },
      }),
    },
  }),
  EventList: obj({
    data: { type: 'array', items: obj({ name: { type: 'string', examples: ['deal.stage_changed'] }, resource: str, description: str }) },
  }),
};

/** The kernel's own read endpoints: any valid key, no resource scope; the document itself is public. */
export function metaPaths(problems: ProblemResponses): Record<string, JsonSchema> {
  const op = (spec: OperationSpec) => operation(spec, problems);
  return {
    '/health': {
      get: op({
        operationId: 'getHealth',
        summary: 'Check the service and the calling key',
        tag: 'meta',
        scope: null,
        query: EMPTY_QUERY_SCHEMA,
        success: { status: 200, description: 'Up.', schema: ref('Health') },
        errors: ['invalid_parameter'],
      }),
    },
    '/scopes': {
      get: op({
        operationId: 'listScopes',
        summary: 'List the scope catalog',
        description: 'Every scope a key can hold, built from the resource plugins, and whether the calling key holds it.',
        tag: 'meta',
        scope: null,
        query: EMPTY_QUERY_SCHEMA,
        success: { status: 200, description: 'The scope catalog.', schema: ref('ScopeList') },
        errors: ['invalid_parameter'],
      }),
    },
    '/events': {
      get: op({
        operationId: 'listEventTypes',
        summary: 'List the event catalog',
        description: 'Every event type a webhook can subscribe to, built from the resource plugins. Each one is described, with its payload, under `webhooks` in this document.',
        tag: 'meta',
        scope: null,
        query: EMPTY_QUERY_SCHEMA,
        success: { status: 200, description: 'The event catalog.', schema: ref('EventList') },
        errors: ['invalid_parameter'],
      }),
    },
    '/openapi.json': {
      get: op({
        operationId: 'getOpenApi',
        summary: 'This document',
        description: 'The API as OpenAPI 3.1, generated at start-up from the resource plugins. Public: no token needed.',
        tag: 'meta',
        scope: 'public',
        query: EMPTY_QUERY_SCHEMA,
        success: { status: 200, description: 'The OpenAPI document.', schema: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { type: 'string', const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } } } },
        errors: ['invalid_parameter', 'internal_error'],
      }),
    },
  };
}
