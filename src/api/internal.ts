import { usageWindow, listUsage } from '../admin/usage.js';
import { setKeyLifetime, workspaceSummary } from '../admin/workspaces.js';
import { WORKSPACE_PATCH_SCHEMA } from '../auth/keys.js';
import { AUDIT_ACTIONS, listAudit } from '../audit/log.js';
import type { Registry } from '../kernel/registry/index.js';
import { type Api, type Route, route, signedIn, who } from '../http/route.js';
import { PAGE_PARAMETERS } from '../kernel/model/index.js';
import { ref } from '../openapi/operation.js';
import { eventCatalogWithExamples } from '../openapi/examples.js';
import { recentDeliveries } from '../webhooks/deliveries.js';
import { keyRoutes } from './key-routes.js';
import { documentRoute } from './meta.js';
import { sessionRoutes } from './session-routes.js';
import { webhookRoutes } from './webhooks.js';
import { idListPattern } from '../common/ids.js';
import { windowProperties } from '../common/window.js';
import { MODE_PARAMETER } from '../common/modes.js';
import { findJob } from '../admin/jobs.js';
import { eventCatalog } from '../events/catalog.js';
import { eventLogPage } from '../events/log.js';
import { requestTestDataDeletion } from '../admin/test-data.js';
import { header } from '../openapi/problems.js';

export const INTERNAL_BASE = '/internal/v1';

/**
 * The internal API of the administration area (docs/reference.md section 10), under /internal/v1: a
 * signed-in person's session, never an API key. Reads are open to every user of the workspace;
 * changes need the admin role. Keys and webhooks go through the very functions the admin
 * command and the public API use.
 */
export function internalApi(registry: Registry, document: () => string = () => '{}', publicDocument: () => string = () => '{}'): Api {
  return { base: INTERNAL_BASE, title: 'Workspace API: internal API of the administration area', credentials: 'session', routes: internalRoutes(registry, document, publicDocument) };
}

/** The routes of the internal API, in the order the document lists them. */
function internalRoutes(registry: Registry, document: () => string, publicDocument: () => string): Route[] {
  // The catalog with each event's example payload, as the public document gives it (read once, when first asked).
  const events = once(() => eventCatalogWithExamples(registry, JSON.parse(publicDocument()) as Record<string, unknown>));
  // The event log's types: the catalog's, as the public event log has them.
  const eventTypes = eventCatalog(registry).map((e) => e.name);
  return [
    ...sessionRoutes(),
    route({
      method: 'get',
      path: '/workspace',
      operationId: 'getWorkspace',
      summary: 'The workspace, its plan and its usage',
      description: "`usage` counts the keys and this month's subscriptions of the mode asked for: the plan allows as many in each mode.",
      tag: 'workspace',
      access: null,
      query: { type: 'object', additionalProperties: false, properties: MODE_PARAMETER },
      success: { status: 200, description: 'The workspace.', schema: ref('Workspace') },
      errors: ['invalid_parameter'],
      handle: async (input) => ({ body: await workspaceSummary(input.deps.db, signedIn(input).workspace, input.deps.clock.now(), input.query.mode) }),
    }),
    route({
      method: 'patch',
      path: '/workspace',
      operationId: 'updateWorkspace',
      summary: "Set the workspace's key policy",
      description: '`max_key_lifetime_days` (1-3650, or null for none): every key made from then on must expire within it (422 otherwise); keys already made keep their expiry. In the audit log as workspace.key_policy_changed.',
      tag: 'workspace',
      access: 'admin',
      body: { schema: WORKSPACE_PATCH_SCHEMA, ref: ref('WorkspacePatch') },
      success: { status: 200, description: 'The workspace, as GET answers it.', schema: ref('Workspace') },
      errors: ['invalid_parameter', 'insufficient_role'],
      handle: async (input) => {
        const acting = who(input);
        const now = input.deps.clock.now();
        const body = input.body;
        if (body.max_key_lifetime_days !== undefined) await setKeyLifetime(input.deps.db, acting.workspace.id, body.max_key_lifetime_days, acting, now);
        return { body: await workspaceSummary(input.deps.db, acting.workspace, now) };
      },
    }),
    ...keyRoutes(registry),
    route({
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
          key_id: { type: 'string', pattern: idListPattern('key_'), description: 'Only this key (`key_...`).' },
          ...windowProperties('From this time (its hour included; RFC 3339). Default: 7 days ago.', 'Up to this time, excluded (RFC 3339). Default: now. At most 31 days after `since`.'),
          ...MODE_PARAMETER,
        },
      },
      success: { status: 200, description: 'The hourly buckets.', schema: ref('UsageList') },
      errors: ['invalid_parameter'],
      handle: async (input) => {
        const window = usageWindow(input.query, input.deps.clock.now());
        const data = await listUsage(input.deps.db, who(input).workspace.id, window);
        return { body: { data } };
      },
    }),
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
      handle: () => ({ body: { data: events() } }),
    },
    ...webhookRoutes(registry, { base: INTERNAL_BASE, read: null, change: 'admin', refused: 'insufficient_role', modes: true }),
    route({
      method: 'get',
      path: '/event-log',
      operationId: 'listEventLog',
      summary: 'The event log of one mode',
      description: 'Every event of the workspace in the mode asked for, newest first, exactly as delivered in the latest API version; `type` narrows it to events of one type.',
      tag: 'webhooks',
      access: null,
      query: { type: 'object', additionalProperties: false, properties: { ...PAGE_PARAMETERS, type: { type: 'string', enum: eventTypes, description: 'Only events of this type.' }, ...MODE_PARAMETER } },
      success: { status: 200, description: 'A page of events.', schema: ref('LoggedEventPage') },
      errors: ['invalid_parameter', 'invalid_cursor'],
      handle: async (input) => {
        const { limit, cursor, type } = input.query;
        const text = await eventLogPage(input.deps.db, who(input).workspace.id, { limit, types: type ? [type] : eventTypes, sort: '-created_at', ...(cursor !== undefined ? { cursor } : {}) });
        return { text, type: 'application/json; charset=utf-8' };
      },
    }),
    route({
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
      handle: async (input) => ({ body: await listAudit(input.deps.db, signedIn(input).workspace.id, input.query) }),
    }),
    route({
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
        properties: { webhook_ids: { type: 'string', pattern: idListPattern('wh_', 100), description: 'Up to 100 subscription ids, comma-separated.' }, ...MODE_PARAMETER },
      },
      success: { status: 200, description: 'The latest deliveries of each subscription.', schema: ref('RecentDeliveries') },
      errors: ['invalid_parameter'],
      handle: async (input) => ({ body: { data: await recentDeliveries(input.deps.db, who(input).workspace.id, [...new Set(input.query.webhook_ids.split(','))]) } }),
    }),
    {
      method: 'delete',
      path: '/test-data',
      operationId: 'deleteTestData',
      summary: "Delete the workspace's test data",
      description:
        'Deletes every test object (of every resource) and every test event, with their deliveries and attempts, in small batches off the request path: the answer is a job to poll at its Location. Test keys and test webhook subscriptions stay, and so do the request log and usage. Nothing of live mode is touched, and no event is sent for what is deleted. Asked again while a deletion is under way, it answers that job. In the audit log as workspace.test_data_deleted.',
      tag: 'workspace',
      access: 'admin',
      success: { status: 202, description: 'The deletion, queued or under way.', schema: ref('Job'), headers: { Location: header('Location') } },
      errors: ['invalid_parameter', 'insufficient_role'],
      handle: async (input) => {
        const { job } = await requestTestDataDeletion(input.deps.db, who(input), input.deps.clock.now());
        return { status: 202, headers: { Location: `${INTERNAL_BASE}/jobs/${job.id}` }, body: job };
      },
    },
    {
      method: 'get',
      path: '/jobs/{id}',
      operationId: 'getJob',
      summary: 'A job and how far it has come',
      description: '`status` is `queued`, `running`, `succeeded` or `failed` (with `error`); `progress` counts what it has done so far (a test data deletion: `objects` and `events` deleted).',
      tag: 'workspace',
      access: null,
      pathParams: { id: { type: 'string', description: 'The job id (`job_...`).' } },
      success: { status: 200, description: 'The job.', schema: ref('Job') },
      errors: ['invalid_parameter', 'not_found'],
      handle: async (input) => ({ body: await findJob(input.deps.db, signedIn(input).workspace.id, String(input.params.id)) }),
    },
    documentRoute('getInternalOpenApi', 'The internal API as OpenAPI 3.1, generated at start-up like the public one and distinct from it. No session needed.', 'meta', document),
  ];
}

/** `make`'s value, made at the first call and kept. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
