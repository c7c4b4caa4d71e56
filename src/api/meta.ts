import { scopeCatalog } from '../auth/scopes.js';
import { eventCatalog } from '../events/catalog.js';
import type { Registry } from '../kernel/registry/index.js';
import { caller, type Route, route } from '../http/route.js';
import { unknownVersion } from '../http/middleware/api-version.js';
import { ref } from '../openapi/operation.js';
import { WINDOW_MS } from '../ratelimit/window.js';
import { isLiveWorkspace, liveWorkspaceOf } from '../common/modes.js';

/** Where the public document is served, without a token. */
export const OPENAPI_PATH = '/openapi.json';

/**
 * The kernel's own read endpoints (any valid key, no resource scope) and the document itself
 * (public). `document` gives the document's text, serialised once at boot.
 */
export function metaRoutes(registry: Registry, document: (version: string) => string, versions: { readonly known: readonly string[]; has(version: string): boolean }): Route[] {
  const scopes = scopeCatalog(registry);
  const events = { data: eventCatalog(registry) };
  const base = { tag: 'meta', access: null, errors: ['invalid_parameter'] as const };
  return [
    {
      ...base,
      method: 'get',
      path: '/health',
      operationId: 'getHealth',
      summary: 'Check the service and the calling key',
      success: { status: 200, description: 'Up.', schema: ref('Health') },
      handle: (input) => {
        const { key, workspace } = caller(input);
        const rate = input.rateLimit;
        return {
          body: {
            status: 'ok',
            key: { id: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes, rate_limit: key.rate_limit, expires_at: key.expires_at === null ? null : new Date(key.expires_at).toISOString() },
            workspace: { ...workspace, id: liveWorkspaceOf(workspace.id) },
            livemode: isLiveWorkspace(workspace.id),
            rate_limit: { limit: rate?.limit ?? key.rate_limit, remaining: rate?.remaining ?? 0, reset: rate?.reset ?? 0, window_seconds: WINDOW_MS / 1000 },
          },
        };
      },
    },
    {
      ...base,
      method: 'get',
      path: '/scopes',
      operationId: 'listScopes',
      summary: 'List the scope catalog',
      description: 'Every scope a key can hold, built from the resource plugins, and whether the calling key holds it.',
      success: { status: 200, description: 'The scope catalog.', schema: ref('ScopeList') },
      handle: (input) => {
        const granted = caller(input).scopes;
        return { body: { data: scopes.map((s) => ({ ...s, granted: granted.has(s.name) })) } };
      },
    },
    {
      ...base,
      method: 'get',
      path: '/events',
      operationId: 'listEventTypes',
      summary: 'List the event catalog',
      description: 'Every event type a webhook can subscribe to, built from the resource plugins. Each one is described, with its payload, under `webhooks` in this document.',
      success: { status: 200, description: 'The event catalog.', schema: ref('EventList') },
      handle: () => ({ body: events }),
    },
    route({
      ...documentRoute('getOpenApi', 'The API as OpenAPI 3.1, generated from the resource plugins, in one API version: `version` if given, else the Api-Version header, else the calling key\'s pin (with a valid key), else the latest. Public: no token needed.', 'meta', () => ''),
      query: { type: 'object', additionalProperties: false, properties: { version: { type: 'string', minLength: 1, maxLength: 40, description: 'The API version to describe (YYYY-MM-DD, one of GET /versions).', examples: ['2026-11-21'] } } } as const,
      errors: ['invalid_parameter', 'invalid_api_version', 'internal_error'],
      handle: (input) => {
        const version = input.query.version ?? input.version;
        if (!versions.has(version)) throw unknownVersion(version, versions.known, 'ask for one of them');
        return { text: document(version), type: 'application/json', headers: { 'Cache-Control': 'public, max-age=300', 'Api-Version': version } };
      },
    }),
  ];
}

/** The route that serves an API's own document (public, serialised once at boot). */
export function documentRoute(operationId: string, description: string, tag: string, document: () => string): Route {
  return {
    method: 'get',
    path: OPENAPI_PATH,
    operationId,
    summary: 'This document',
    description,
    tag,
    access: 'public',
    success: { status: 200, description: 'The OpenAPI document.', schema: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { type: 'string', const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } } } },
    errors: ['invalid_parameter', 'internal_error'],
    handle: () => ({ text: document(), type: 'application/json', headers: { 'Cache-Control': 'public, max-age=300' } }),
  };
}
