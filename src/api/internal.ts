import { dummyHash } from '../admin/passwords.js';
import { ABSOLUTE_MS, cookieValue, endSession, SESSION_COOKIE, signIn } from '../admin/sessions.js';
import { HOUR_MS, listUsage } from '../admin/usage.js';
import { workspaceSummary } from '../admin/workspaces.js';
import { ApiError } from '../common/errors.js';
import { AUDIT_ACTIONS, listAudit } from '../audit/log.js';
import { createKey, findPlan, KEY_CREATE_SCHEMA, keyView, listKeyPage, revokeKey } from '../auth/keys.js';
import { effectiveScopes, type Plan } from '../auth/plans.js';
import { scopeCatalog } from '../auth/scopes.js';
import type { Registry } from '../kernel/registry.js';
import { headerOf, signedIn, who, type Api, type Route, type RouteInput } from '../kernel/route.js';
import { PAGE_PARAMETERS } from '../kernel/schemas.js';
import { ref } from '../openapi/operation.js';
import { SIGN_IN_SCHEMA } from '../openapi/internal.js';
import { documentRoute } from './meta.js';
import { eventCatalog, TEST_EVENT, type EventInfo } from '../events/catalog.js';
import { eventExample } from '../openapi/examples.js';
import { webhookRoutes } from './webhooks.js';
import { recentDeliveries } from '../webhooks/deliveries.js';

export const INTERNAL_BASE = '/internal/v1';


/**
 * The cookie that carries a session: never readable by scripts, never sent by another site, and
 * never over plain http once it was set over https (or always, with COOKIE_SECURE=true).
 */
function sessionCookie(input: RouteInput, value: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${input.deps.config.cookieSecure || input.secure ? '; Secure' : ''}`;
}

const sessionBody = (input: RouteInput) => {
  const { user, workspace } = signedIn(input);
  return { user, workspace };
};

/**
 * The internal API of the administration area (API.md section 10), under /internal/v1: a
 * signed-in person's session, never an API key. Reads are open to every user of the workspace;
 * changes need the admin role. Keys and webhooks go through the very functions the admin
 * command and the public API use.
 */
export function internalApi(registry: Registry, document: () => string = () => '{}', publicDocument: () => string = () => '{}'): Api {
  const scopes = scopeCatalog(registry);
  let events: Array<EventInfo & { example: unknown }> | undefined;
  // The catalog with each event's example payload, as the public document gives it (read once).
  const eventsWithExamples = () => {
    const publicDoc = JSON.parse(publicDocument()) as Record<string, unknown>;
    events ??= [...eventCatalog(registry), TEST_EVENT].map((e) => ({ ...e, example: eventExample(publicDoc, e.name) }));
    return events;
  };
  const catalog = scopes.map((s) => s.name);
  // Ready before the first sign-in with an unknown email, whose answer must take no longer than another's.
  void dummyHash();
  const session = { tag: 'session', errors: ['invalid_parameter'] as const };
  const routes: Route[] = [
    {
      ...session,
      method: 'post',
      path: '/session',
      operationId: 'signIn',
      summary: 'Sign in',
      description:
        'Opens a session and sets it as the `ws_session` cookie (HttpOnly, SameSite=Strict; Secure when the request came over https (a TLS connection, or X-Forwarded-Proto: https behind TRUST_PROXY=true) and always with COOKIE_SECURE=true). A session ends after 12 hours without use and after 7 days in any case. A wrong email and a wrong password get the same answer. More than 10 failures in 15 minutes from one address (for one email or many) are answered 429 with Retry-After; failures for one email from many addresses make addresses that failed wait longer and longer (1 s, doubling, up to a minute), while an address without failures signs in at once.',
      access: 'public',
      body: { schema: SIGN_IN_SCHEMA, ref: ref('SignIn') },
      success: { status: 200, description: 'Signed in.', schema: ref('Session'), headers: { 'Set-Cookie': { description: 'The session cookie.', schema: { type: 'string' }, required: true } } },
      errors: ['invalid_parameter', 'invalid_credentials', 'rate_limited'],
      handle: async (input) => {
        const body = input.body as { email: string; password: string };
        const { token, context } = await signIn(input.deps.db, { email: body.email, password: body.password, ip: input.ip }, input.deps.clock.now());
        return { headers: { 'Set-Cookie': sessionCookie(input, token, ABSOLUTE_MS / 1000), 'Cache-Control': 'no-store' }, body: { user: context.user, workspace: context.workspace } };
      },
    },
    {
      ...session,
      method: 'get',
      path: '/session',
      operationId: 'getSession',
      summary: 'Who is signed in',
      access: null,
      success: { status: 200, description: 'The signed-in user and their workspace.', schema: ref('Session') },
      handle: (input) => ({ body: sessionBody(input) }),
    },
    {
      ...session,
      method: 'delete',
      path: '/session',
      operationId: 'signOut',
      summary: 'Sign out',
      description: 'Ends the session on the server (its cookie opens nothing any more) and clears the cookie. Answers 204 even when no session was open.',
      access: 'public',
      success: { status: 204, description: 'Signed out.' },
      handle: async (input) => {
        await endSession(input.deps.db, cookieValue(headerOf(input, 'cookie'), SESSION_COOKIE));
        return { status: 204, headers: { 'Set-Cookie': sessionCookie(input, '', 0) } };
      },
    },
    {
      method: 'get',
      path: '/workspace',
      operationId: 'getWorkspace',
      summary: 'The workspace, its plan and its usage',
      tag: 'workspace',
      access: null,
      success: { status: 200, description: 'The workspace.', schema: ref('Workspace') },
      errors: ['invalid_parameter'],
      handle: async (input) => ({ body: await workspaceSummary(input.deps.db, signedIn(input).workspace, input.deps.clock.now()) }),
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
    {
      method: 'get',
      path: '/keys',
      operationId: 'listKeys',
      summary: 'List API keys',
      tag: 'keys',
      access: null,
      query: { type: 'object', additionalProperties: false, properties: PAGE_PARAMETERS },
      success: { status: 200, description: 'A page of keys, newest first, revoked ones included.', schema: ref('KeyList') },
      errors: ['invalid_parameter', 'invalid_cursor'],
      handle: async (input) => ({ body: await listKeyPage(input.deps.db, signedIn(input).workspace.id, input.query as { limit: number; cursor?: string }) }),
    },
    {
      method: 'post',
      path: '/keys',
      operationId: 'createKey',
      summary: 'Create an API key',
      description: "The plan's rules hold exactly as for the admin command: a read_only plan allows no write: scope (403 plan_forbids_scope), the number of live keys is capped (403 key_limit_reached), an unknown scope or a rate limit outside 1-6000 is 422.",
      tag: 'keys',
      access: 'admin',
      body: { schema: KEY_CREATE_SCHEMA, ref: ref('KeyCreate') },
      success: { status: 201, description: 'The key and its token, shown only here.', schema: ref('KeyWithToken') },
      errors: ['invalid_parameter', 'insufficient_role', 'plan_forbids_scope', 'key_limit_reached'],
      handle: async (input) => {
        const acting = who(input);
        const body = input.body as { name: string; scopes: string[]; rate_limit?: number };
        const key = await createKey(input.deps.db, catalog, { workspace: acting.workspace.id, ...body }, acting, input.deps.clock.now());
        return { status: 201, headers: { 'Cache-Control': 'no-store' }, body: { ...keyView(key), token: key.token } };
      },
    },
    {
      method: 'delete',
      path: '/keys/{id}',
      operationId: 'revokeKey',
      summary: 'Revoke an API key',
      description: 'Every server process refuses the key from its next request on. Revoking a revoked key changes nothing.',
      tag: 'keys',
      access: 'admin',
      pathParams: { id: { type: 'string', description: 'The key id (`key_...`).' } },
      success: { status: 204, description: 'Revoked.' },
      errors: ['invalid_parameter', 'insufficient_role', 'not_found'],
      handle: async (input) => {
        const acting = who(input);
        const { deps } = input;
        await revokeKey(deps.db, deps.redis, deps.config.redisPrefix, String(input.params.id), { workspaceId: acting.workspace.id, context: acting, now: deps.clock.now() });
        return { status: 204 };
      },
    },
    {
      method: 'get',
      path: '/usage',
      operationId: 'getUsage',
      summary: "The public API's answers per key and hour",
      description:
        'Hourly buckets (UTC) of the answers the public API gave to the keys of this workspace: all of them (`requests`), those refused by the rate limit (`rate_limited`, 429), other 4xx (`client_errors`) and 5xx (`server_errors`). Oldest first; hours without requests are absent. Kept 30 days; each server writes its counts every few seconds (USAGE_FLUSH_SECONDS), so the current hour may lag a little.',
      tag: 'usage',
      access: null,
      query: {
        type: 'object',
        additionalProperties: false,
        properties: {
          key_id: { type: 'string', pattern: '^key_[0-9a-z]{1,60}$', description: 'Only this key (`key_...`).' },
          since: { type: 'string', format: 'date-time', description: 'From this time (its hour included; RFC 3339). Default: 7 days ago.' },
          until: { type: 'string', format: 'date-time', description: 'Up to this time, excluded (RFC 3339). Default: now. At most 31 days after `since`.' },
        },
      },
      success: { status: 200, description: 'The hourly buckets.', schema: ref('UsageList') },
      errors: ['invalid_parameter'],
      handle: async (input) => {
        const { key_id: keyId, since, until } = input.query as { key_id?: string; since?: string; until?: string };
        const now = input.deps.clock.now();
        const to = until !== undefined ? Date.parse(until) : now;
        const from = since !== undefined ? Date.parse(since) : to - 7 * 24 * HOUR_MS;
        if (!(from < to)) throw new ApiError('invalid_parameter', 'since must be before until.', { errors: [{ parameter: 'since', message: 'must be before until' }] });
        if (to - from > 31 * 24 * HOUR_MS) throw new ApiError('invalid_parameter', 'A usage query spans at most 31 days.', { errors: [{ parameter: 'until', message: 'must be at most 31 days after since' }] });
        const data = await listUsage(input.deps.db, signedIn(input).workspace.id, { ...(keyId !== undefined ? { keyId } : {}), since: from, until: to });
        return { body: { data } };
      },
    },
    {
      method: 'get',
      path: '/events',
      operationId: 'listEventTypes',
      summary: 'The event catalog, with example payloads',
      description: 'Every event type a webhook can subscribe to (and `webhook.test`), with an example payload: the one the public document gives under `webhooks`.',
      tag: 'webhooks',
      access: null,
      success: { status: 200, description: 'The event catalog.', schema: ref('EventTypeList') },
      errors: ['invalid_parameter'],
      handle: () => ({ body: { data: eventsWithExamples() } }),
    },
    ...webhookRoutes(registry, { base: INTERNAL_BASE, read: null, change: 'admin', refused: 'insufficient_role' }),
    {
      method: 'get',
      path: '/audit-log',
      operationId: 'listAuditLog',
      summary: 'The audit log',
      description: 'Every change to keys, webhooks, sign-ins and the plan, from every door (this API, the public API with a key, the admin command) and by the service itself, newest first.',
      tag: 'audit',
      access: null,
      query: {
        type: 'object',
        additionalProperties: false,
        properties: {
          ...PAGE_PARAMETERS,
          action: { type: 'string', enum: [...AUDIT_ACTIONS], description: 'Only entries of this action.' },
          hide_sign_ins: { type: 'boolean', default: false, description: 'Leave out sign-ins and failed sign-ins (`user.signed_in`, `user.sign_in_failed`), which outnumber the changes.' },
        },
      },
      success: { status: 200, description: 'A page of entries, newest first.', schema: ref('AuditList') },
      errors: ['invalid_parameter', 'invalid_cursor'],
      handle: async (input) => ({ body: await listAudit(input.deps.db, signedIn(input).workspace.id, input.query as { limit: number; cursor?: string; action?: string; hide_sign_ins: boolean }) }),
    },
    {
      method: 'get',
      path: '/webhook-deliveries/recent',
      operationId: 'listRecentDeliveries',
      summary: "Each subscription's latest deliveries",
      description: 'The latest deliveries (at most 5 each, newest first) of each subscription named in `webhook_ids`, in one request: what the webhooks list shows beside each. An id of another workspace, or of no subscription, gives an empty list.',
      tag: 'webhooks',
      access: null,
      query: {
        type: 'object',
        additionalProperties: false,
        required: ['webhook_ids'],
        properties: { webhook_ids: { type: 'string', pattern: '^wh_[0-9a-z]{1,60}(,wh_[0-9a-z]{1,60}){0,99}$', description: 'Up to 100 subscription ids, comma-separated.' } },
      },
      success: { status: 200, description: 'The latest deliveries of each subscription.', schema: ref('RecentDeliveries') },
      errors: ['invalid_parameter'],
      handle: async (input) => ({ body: { data: await recentDeliveries(input.deps.db, signedIn(input).workspace.id, [...new Set((input.query.webhook_ids as string).split(','))]) } }),
    },
    documentRoute('getInternalOpenApi', 'The internal API as OpenAPI 3.1, generated at start-up like the public one and distinct from it. No session needed.', 'meta', document),
  ];
  return { base: INTERNAL_BASE, title: 'Workspace API: internal API of the administration area', credentials: 'session', routes };
}
