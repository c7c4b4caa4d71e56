import type Router from '@koa/router';
import { findPlan } from '../../auth/keys.js';
import { WEBHOOKS_SCOPE } from '../../auth/scopes.js';
import type { Deps } from '../../deps.js';
import { ApiError, type ErrorItem } from '../../errors.js';
import { eventCatalog } from '../../events/catalog.js';
import { patternErrors } from '../../events/patterns.js';
import { createQueryAjv, createSchemaAjv } from '../../kernel/ajv.js';
import { decodeCursor } from '../../kernel/cursor.js';
import { toPage } from '../../kernel/keyset.js';
import type { Registry } from '../../kernel/registry.js';
import { DEFAULT_PAGE, MAX_PAGE } from '../../kernel/schemas.js';
import { createTestDelivery, listDeliveries, retryDelivery, toDelivery } from '../../webhooks/deliveries.js';
import { bareHost, checkHost, DestinationError, schemeError, type Resolve } from '../../webhooks/ssrf.js';
import {
  createSubscription,
  deleteSubscription,
  findSubscription,
  listSubscriptions,
  rotateSecret,
  toSubscription,
  updateSubscription,
  type SubscriptionChanges,
} from '../../webhooks/subscriptions.js';
import { authOf, type AppContext, type AppState, type Ctx } from '../context.js';
import { jsonBody } from '../middleware/body.js';
import { validateQuery } from '../middleware/query.js';
import { requireScope } from '../middleware/scope.js';

const url = { type: 'string', format: 'uri', maxLength: 2048, description: 'Where deliveries are POSTed: https, public address.' };
const events = { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 100 }, description: 'Event names, "*", or "<resource>.*".' };
const description = { type: ['string', 'null'], maxLength: 500 };
export const CREATE_SCHEMA = { type: 'object', additionalProperties: false, required: ['url', 'events'], properties: { url, events, description } };
export const UPDATE_SCHEMA = { type: 'object', additionalProperties: false, properties: { url, events, description, enabled: { type: 'boolean' } } };
const page = { limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE }, cursor: { type: 'string', minLength: 1, maxLength: 2048 } };
export const LIST_QUERY = { type: 'object', additionalProperties: false, properties: page };
export const DELIVERIES_QUERY = { type: 'object', additionalProperties: false, properties: { ...page, status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] } } };

type WebhookDeps = Pick<Deps, 'db' | 'clock' | 'notifier' | 'config'>;

/** Both lists here page newest first by (created_at, id). */
const newestFirst = (resource: string) => ({ resource, sort: '-created_at', column: 'created_at' });

/** The subscription API (API.md section 8), every route behind webhooks:manage. */
export function mountWebhooks(router: Router<AppState, AppContext>, registry: Registry, deps: WebhookDeps, resolve: Resolve): void {
  const { db, clock, notifier, config } = deps;
  const catalog = eventCatalog(registry);
  const schemaAjv = createSchemaAjv();
  const queryAjv = createQueryAjv();
  const readOnly = new Set(['id', 'secret', 'created_at', 'updated_at', 'disabled_reason']);
  const createBody = jsonBody(schemaAjv.compile(CREATE_SCHEMA), readOnly);
  const updateBody = jsonBody(schemaAjv.compile(UPDATE_SCHEMA), readOnly);
  const listQuery = validateQuery(queryAjv.compile(LIST_QUERY));
  const deliveriesQuery = validateQuery(queryAjv.compile(DELIVERIES_QUERY));
  const noQuery = validateQuery(registry.validateEmptyQuery);
  const scope = requireScope(WEBHOOKS_SCOPE);
  const retries = config.webhookRetryDelays.length;

  /** The URL's scheme and the patterns, then (if the scheme is fine) where the URL leads. */
  async function checkInput(body: { url?: string; events?: string[] }): Promise<void> {
    const errors: ErrorItem[] = [];
    let target: URL | undefined;
    if (body.url !== undefined) {
      target = new URL(body.url);
      const scheme = schemeError(target, config.webhookAllowPrivate);
      if (scheme) errors.push({ pointer: '/url', message: scheme });
      else if (target.hash) errors.push({ pointer: '/url', message: 'must not have a fragment' });
    }
    if (body.events !== undefined) errors.push(...patternErrors(body.events, catalog));
    if (errors.length === 0 && target) {
      try {
        await checkHost(bareHost(target), resolve, config.webhookAllowPrivate);
      } catch (err) {
        if (!(err instanceof DestinationError)) throw err;
        errors.push({ pointer: '/url', message: err.message });
      }
    }
    if (errors.length > 0) throw new ApiError('validation_failed', `The subscription is invalid: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
  }

  /** Test deliveries and retries send: a plan without webhooks sends nothing. */
  async function requireWebhookPlan(ctx: Ctx): Promise<void> {
    const plan = await findPlan(db, authOf(ctx).workspace.plan);
    if (!plan || plan.webhooks_per_month <= 0) throw new ApiError('plan_forbids_webhooks', `The ${authOf(ctx).workspace.plan} plan does not include webhooks.`);
  }

  const workspaceOf = (ctx: Ctx) => authOf(ctx).workspace.id;
  const idOf = (ctx: Ctx) => String(ctx.params.id);

  router.post('/v1/webhooks', scope, noQuery, createBody, async (ctx: Ctx) => {
    const body = ctx.state.body as { url: string; events: string[]; description?: string | null };
    await checkInput(body);
    const { row, secret } = await createSubscription(db, workspaceOf(ctx), body, clock.now());
    ctx.status = 201;
    ctx.set('Location', `/v1/webhooks/${row.id}`);
    ctx.body = { ...toSubscription(row), secret };
  });

  router.get('/v1/webhooks', scope, listQuery, async (ctx: Ctx) => {
    const query = ctx.state.query as { limit: number; cursor?: string };
    const after = query.cursor !== undefined ? decodeCursor(query.cursor, 'webhook', '-created_at') : undefined;
    const rows = await listSubscriptions(db, workspaceOf(ctx), query.limit, after);
    ctx.body = toPage(rows, query.limit, newestFirst('webhook'), toSubscription);
  });

  router.get('/v1/webhooks/:id', scope, noQuery, async (ctx: Ctx) => {
    ctx.body = toSubscription(await findSubscription(db, workspaceOf(ctx), idOf(ctx)));
  });

  router.patch('/v1/webhooks/:id', scope, noQuery, updateBody, async (ctx: Ctx) => {
    const body = ctx.state.body as SubscriptionChanges;
    await checkInput(body);
    ctx.body = toSubscription(await updateSubscription(db, workspaceOf(ctx), idOf(ctx), body, clock.now()));
  });

  router.delete('/v1/webhooks/:id', scope, noQuery, async (ctx: Ctx) => {
    await deleteSubscription(db, workspaceOf(ctx), idOf(ctx), clock.now());
    ctx.status = 204;
  });

  router.post('/v1/webhooks/:id/rotate-secret', scope, noQuery, async (ctx: Ctx) => {
    const { row, secret } = await rotateSecret(db, workspaceOf(ctx), idOf(ctx), clock.now());
    ctx.body = { ...toSubscription(row), secret };
  });

  router.post('/v1/webhooks/:id/test', scope, noQuery, async (ctx: Ctx) => {
    const subscription = await findSubscription(db, workspaceOf(ctx), idOf(ctx));
    await requireWebhookPlan(ctx);
    const delivery = await createTestDelivery(db, subscription, retries, clock.now());
    notifier.notify();
    ctx.status = 202;
    ctx.body = toDelivery(delivery);
  });

  router.get('/v1/webhooks/:id/deliveries', scope, deliveriesQuery, async (ctx: Ctx) => {
    const subscription = await findSubscription(db, workspaceOf(ctx), idOf(ctx));
    const query = ctx.state.query as { limit: number; cursor?: string; status?: string };
    const after = query.cursor !== undefined ? decodeCursor(query.cursor, 'delivery', '-created_at') : undefined;
    const rows = await listDeliveries(db, subscription.id, query.limit, { ...(after ? { after } : {}), ...(query.status ? { status: query.status } : {}) });
    ctx.body = toPage(rows, query.limit, newestFirst('delivery'), toDelivery);
  });

  router.post('/v1/webhooks/:id/deliveries/:delivery_id/retry', scope, noQuery, async (ctx: Ctx) => {
    const subscription = await findSubscription(db, workspaceOf(ctx), idOf(ctx));
    await requireWebhookPlan(ctx);
    const delivery = await retryDelivery(db, subscription.id, String(ctx.params.delivery_id), clock.now());
    notifier.notify();
    ctx.status = 202;
    ctx.body = toDelivery(delivery);
  });
}
