import { CHANGE_KINDS, type JsonSchema } from '../kernel/model/index.js';
import { WINDOW_MS } from '../ratelimit/window.js';

export const str = { type: 'string' };
export const int = (minimum: number) => ({ type: 'integer', minimum });
/** An object whose every property is required and nothing else is allowed. */
export const obj = (properties: Record<string, JsonSchema>, description?: string): JsonSchema => ({
  type: 'object',
  ...(description ? { description } : {}),
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});

/** The scope catalog, each scope with one yes/no of the caller's (`granted` to a key, `allowed` by a plan). */
export function scopeList(flag: string, description: string): JsonSchema {
  return obj({
    data: {
      type: 'array',
      items: obj({
        name: { type: 'string', examples: ['read:deals'] },
        resource: str,
        access: { type: 'string', enum: ['read', 'write', 'manage'] },
        description: str,
        [flag]: { type: 'boolean', description },
      }),
    },
  });
}

/** The API's versions, oldest first, each with its changes, and the latest; `withKey`: the calling key's too (GET /v1/versions). */
export function versionList(withKey: boolean): JsonSchema {
  return obj({
    data: {
      type: 'array',
      description: 'Every version, oldest first.',
      items: obj({
        version: { type: 'string', format: 'date', examples: ['2026-11-21'] },
        changes: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['description', 'kind'],
            properties: {
              description: str,
              resource: { type: 'string', description: 'The resource it changes; absent for a change of the whole API.' },
              kind: { type: 'string', enum: [...CHANGE_KINDS] },
            },
          },
        },
      }),
    },
    latest: { type: 'string', format: 'date', description: 'The newest version: what a new key is pinned to.' },
    ...(withKey ? { key_version: { type: 'string', format: 'date', description: 'The version the calling key is pinned to.' } } : {}),
  });
}

export const META_SCHEMAS: Record<string, JsonSchema> = {
  Health: obj(
    {
      status: { type: 'string', const: 'ok' },
      key: obj(
        {
          id: str,
          name: str,
          prefix: str,
          scopes: { type: 'array', items: str },
          rate_limit: int(1),
          expires_at: { type: ['string', 'null'], format: 'date-time', description: 'When the key stops working (401 key_expired from then on); null: it lives until revoked.' },
        },
        'The calling key.',
      ),
      workspace: obj({ id: str, name: str, plan: str }, "The key's workspace (the same id in both modes)."),
      livemode: { type: 'boolean', description: 'false for a test key (`wsk_test_...`): it reaches only test objects and events.' },
      rate_limit: obj({ limit: int(1), remaining: int(0), reset: int(0), window_seconds: { type: 'integer', const: WINDOW_MS / 1000 } }, "The key's window after this request."),
    },
    'The service is up, and who is calling.',
  ),
  VersionList: versionList(true),
  ScopeList: scopeList('granted', 'Whether the calling key holds this scope (and its plan allows it).'),
  EventList: obj({
    data: { type: 'array', items: obj({ name: { type: 'string', examples: ['deal.stage_changed'] }, resource: str, description: str }) },
  }),
};
