import { createKey, findPlan, KEY_CREATE_SCHEMA, KEY_PATCH_SCHEMA, KEY_ROLL_SCHEMA, keyView, listKeyPage, revokeKey, rollKey, updateKey } from '../auth/keys.js';
import { effectiveScopes, type Plan } from '../auth/plans.js';
import { scopeCatalog } from '../auth/scopes.js';
import type { Registry } from '../kernel/registry/index.js';
import { type Route, route, signedIn, who } from '../http/route.js';
import { PAGE_PARAMETERS } from '../kernel/model/index.js';
import { ref } from '../openapi/operation.js';
import { listRequests, requestSummary, STATUS_FILTER } from '../admin/request-log.js';
import { windowProperties } from '../common/window.js';
import { MODE_PARAMETER } from '../common/modes.js';

/** The query of a route about one key: the mode it is of (an id of the other mode's is not found). */
const MODE_QUERY = { type: 'object', additionalProperties: false, properties: MODE_PARAMETER } as const;

/** The workspace's API keys as the administration area manages them: the very functions the admin command uses. */
export function keyRoutes(registry: Registry): Route[] {
  const scopes = scopeCatalog(registry);
  const catalog = scopes.map((s) => s.name);
  return [
    {
      method: 'get',
      path: '/versions',
      operationId: 'listVersions',
      summary: 'The versions of the public API',
      description: 'Every version of the public API, oldest first, each with what changed in it, and the latest: what a key may be pinned to (`api_version`), and what moving its pin changes.',
      tag: 'keys',
      access: null,
      success: { status: 200, description: 'The versions.', schema: ref('VersionList') },
      errors: ['invalid_parameter'],
      handle: (input) => ({ body: { data: input.deps.versions.listing(), latest: input.deps.versions.latest } }),
    },
    {
      method: 'get',
      path: '/scopes',
      operationId: 'listScopes',
      summary: 'Every scope, and whether the plan allows it',
      tag: 'keys',
      access: null,
      success: { status: 200, description: 'The scope catalog.', schema: ref('ScopeAllowedList') },
      errors: ['invalid_parameter'],
      handle: async (input) => {
        const plan = (await findPlan(input.deps.db, signedIn(input).workspace.plan)) as Plan;
        const allowed = new Set(effectiveScopes(catalog, plan.api_access));
        return { body: { data: scopes.map((s) => ({ ...s, allowed: allowed.has(s.name) })) } };
      },
    },
    route({
      method: 'get',
      path: '/keys',
      operationId: 'listKeys',
      summary: 'List API keys',
      tag: 'keys',
      access: null,
      query: { type: 'object', additionalProperties: false, properties: { ...PAGE_PARAMETERS, ...MODE_PARAMETER } },
      success: { status: 200, description: 'A page of keys of the mode asked for, newest first, revoked ones included.', schema: ref('KeyList') },
      errors: ['invalid_parameter', 'invalid_cursor'],
      handle: async (input) => ({ body: await listKeyPage(input.deps.db, who(input).workspace.id, input.query) }),
    }),
    route({
      method: 'get',
      path: '/keys/{id}/requests',
      operationId: 'listKeyRequests',
      summary: "List a key's requests",
      description:
        'Every public API request made with the key (refusals of the key itself, expired or from an address its allowlist does not hold, included), newest first, kept RETENTION_DAYS. Each server writes its log in batches, so a request shows here about a second after its answer.',
      tag: 'keys',
      access: null,
      pathParams: { id: { type: 'string', description: 'The key id (`key_...`).' } },
      query: {
        type: 'object',
        additionalProperties: false,
        properties: {
          ...PAGE_PARAMETERS,
          status: { type: 'string', pattern: STATUS_FILTER.source, description: 'Only answers of this class (`2xx`, `3xx` for 304s, `4xx`, `5xx`) or this status code (`404`).', examples: ['4xx'] },
          ...windowProperties('Requests that arrived at or after this time (RFC 3339).', 'Requests that arrived before this time (RFC 3339).'),
          ...MODE_PARAMETER,
        },
      },
      success: { status: 200, description: "A page of the key's requests, newest first.", schema: ref('KeyRequestList') },
      errors: ['invalid_parameter', 'invalid_cursor', 'not_found'],
      handle: async (input) => ({ body: await listRequests(input.deps.db, who(input).workspace.id, String(input.params.id), input.query) }),
    }),
    route({
      method: 'get',
      path: '/keys/{id}/requests/summary',
      operationId: 'summarizeKeyRequests',
      summary: "A key's errors over 24 hours and 7 days",
      description: 'The answers with status 400 and up, counted by status and error code, over the last 24 and 168 whole UTC hours (the current one included).',
      tag: 'keys',
      access: null,
      pathParams: { id: { type: 'string', description: 'The key id (`key_...`).' } },
      query: MODE_QUERY,
      success: { status: 200, description: "The key's errors by status and code.", schema: ref('KeyRequestSummary') },
      errors: ['invalid_parameter', 'not_found'],
      handle: async (input) => ({ body: await requestSummary(input.deps.db, who(input).workspace.id, String(input.params.id), input.deps.clock.now()) }),
    }),
    route({
      method: 'post',
      path: '/keys',
      operationId: 'createKey',
      summary: 'Create an API key',
      description: "The plan's rules hold exactly as for the admin command: a read_only plan allows no write: scope (403 plan_forbids_scope), the number of live keys is capped (403 key_limit_reached), an unknown scope or a rate limit outside 1-6000 is 422, and so is a key that would outlive the workspace's max_key_lifetime_days (or has no expiry while it is set).",
      tag: 'keys',
      access: 'admin',
      body: { schema: KEY_CREATE_SCHEMA, ref: ref('KeyCreate') },
      success: { status: 201, description: 'The key and its token, shown only here.', schema: ref('KeyWithToken') },
      errors: ['invalid_parameter', 'insufficient_role', 'plan_forbids_scope', 'key_limit_reached'],
      handle: async (input) => {
        const acting = who(input);
        const body = input.body;
        const key = await createKey(input.deps.db, { scopes: catalog, versions: input.deps.versions }, { workspace: acting.workspace.id, ...body }, acting, input.deps.clock.now());
        return { status: 201, headers: { 'Cache-Control': 'no-store' }, body: { ...keyView(key), token: key.token } };
      },
    }),
    route({
      method: 'post',
      path: '/keys/{id}/roll',
      operationId: 'rollKey',
      summary: 'Roll an API key: a new token, the old one refused after an overlap',
      description:
        'Makes a new key with the same name, scopes and rate limit (its token shown only in this answer), and ends the old key once `overlap_seconds` (0-604800) have passed: from then on every server process refuses it like a revoked key. The new key expires as long after its making as the old one was made to live, unless `expires_in_days` says otherwise (within the workspace\'s max_key_lifetime_days). A revoked, expired or already rolled key is 409 key_not_live. In the audit log as key.rolled, naming both keys.',
      tag: 'keys',
      access: 'admin',
      pathParams: { id: { type: 'string', description: 'The key id (`key_...`).' } },
      query: MODE_QUERY,
      body: { schema: KEY_ROLL_SCHEMA, ref: ref('KeyRoll') },
      success: { status: 201, description: 'The new key and its token, shown only here, with `replaces`: the old key and when it is refused from.', schema: ref('RolledKey') },
      errors: ['invalid_parameter', 'insufficient_role', 'plan_forbids_scope', 'not_found', 'key_not_live'],
      handle: async (input) => {
        const acting = who(input);
        const { deps } = input;
        const key = await rollKey(deps.db, deps.redis, deps.config.redisPrefix, String(input.params.id), input.body, { workspaceId: acting.workspace.id, context: acting, now: deps.clock.now() });
        return { status: 201, headers: { 'Cache-Control': 'no-store' }, body: { ...keyView(key), token: key.token, replaces: key.replaces } };
      },
    }),
    route({
      method: 'patch',
      path: '/keys/{id}',
      operationId: 'updateKey',
      summary: "Change an API key's IP allowlist or API version",
      description:
        '`allowed_ips`: up to 20 IPv4 or IPv6 addresses or CIDR ranges, or null for anywhere (in the audit log as key.updated). `api_version`: the version its requests without an Api-Version header are answered in, one of GET /v1/versions (in the audit log as key.version_changed). Every server process applies either within a second.',
      tag: 'keys',
      access: 'admin',
      pathParams: { id: { type: 'string', description: 'The key id (`key_...`).' } },
      query: MODE_QUERY,
      body: { schema: KEY_PATCH_SCHEMA, ref: ref('KeyPatch') },
      success: { status: 200, description: 'The key as it now is.', schema: ref('Key') },
      errors: ['invalid_parameter', 'insufficient_role', 'not_found'],
      handle: async (input) => {
        const acting = who(input);
        const key = await updateKey(input.deps.db, String(input.params.id), input.body, { workspaceId: acting.workspace.id, context: acting, now: input.deps.clock.now(), versions: input.deps.versions });
        return { body: keyView(key) };
      },
    }),
    route({
      method: 'delete',
      path: '/keys/{id}',
      operationId: 'revokeKey',
      summary: 'Revoke an API key',
      description: 'Every server process refuses the key from its next request on. Revoking a revoked key changes nothing.',
      tag: 'keys',
      access: 'admin',
      pathParams: { id: { type: 'string', description: 'The key id (`key_...`).' } },
      query: MODE_QUERY,
      success: { status: 204, description: 'Revoked.' },
      errors: ['invalid_parameter', 'insufficient_role', 'not_found'],
      handle: async (input) => {
        const acting = who(input);
        const { deps } = input;
        await revokeKey(deps.db, deps.redis, deps.config.redisPrefix, String(input.params.id), { workspaceId: acting.workspace.id, context: acting, now: deps.clock.now() });
        return { status: 204 };
      },
    }),
  ];
}
