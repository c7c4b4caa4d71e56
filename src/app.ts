import Router from '@koa/router';
import compose from 'koa-compose';
import Koa from 'koa';
import { clientAddress } from './http/middleware/client-address.js';
import { KEY_CACHE_MS, KEY_CACHE_SQLITE_MS, KeyLookup } from './auth/lookup.js';
import { sqliteChangeCounter } from './db/changes.js';
import type { Deps } from './deps.js';
import { systemClock } from './common/clock.js';
import { DAY_MS, serviceVersion } from './common/config.js';
import type { Registry } from './kernel/registry/index.js';
import { createStores } from './kernel/storage/index.js';
import { createLimiter } from './ratelimit/limiter.js';
import type { AppContext, AppState, Ctx } from './http/middleware/context.js';
import { authenticateSession, checkOrigin } from './http/middleware/session.js';
import { internalApi, INTERNAL_BASE } from './api/internal.js';
import { adminPage, isAdminPage } from './http/admin-page.js';
import { PROBE_PATHS, probes } from './http/probes.js';
import { accessLog } from './http/middleware/access-log.js';
import { observe } from './http/middleware/observe.js';
import { traceRequests } from './http/middleware/trace.js';
import { tracingOn } from './tracing/tracer.js';
import { meter } from './http/middleware/meter.js';
import { measure } from './http/middleware/metrics.js';
import { UsageMeter } from './admin/usage.js';
import { RequestLog } from './admin/request-log.js';
import { authenticate } from './http/middleware/authenticate.js';
import { errorRenderer } from './http/middleware/errors.js';
import { fallback } from './http/middleware/fallback.js';
import { rateLimit } from './http/middleware/rate-limit.js';
import { identify } from './http/middleware/request-id.js';
import { dispatchBySegment } from './http/dispatch.js';
import { mount, mountReserved } from './http/mount.js';
import { publicApi } from './api/public.js';
import { provisionalVersion, resolveVersion } from './http/middleware/api-version.js';
import { Versions } from './versions/index.js';
import { createResolve } from './webhooks/ssrf.js';
import { apiAt, buildInternalOpenApi, buildOpenApi } from './openapi/document.js';

export interface App {
  koa: Koa<AppState, AppContext>;
  /** Every route of the public API, for tests that hold its OpenAPI document to them. */
  router: Router<AppState, AppContext>;
  /** Every route of the internal API (docs/reference.md section 10). */
  internalRouter: Router<AppState, AppContext>;
  /** The API's versions (src/versions): a worker in the same process renders deliveries with them. */
  versions: Versions;
  /** Stops its timers and writes the usage counted and the requests logged so far. */
  close(): Promise<void>;
}

/** A path of the internal API: there, sessions; everywhere else, API keys. */
const isInternal = (path: string) => path === INTERNAL_BASE || path.startsWith(`${INTERNAL_BASE}/`);

/** Paths as the document writes them: /v1/deals/ and /V1/Deals are not /v1/deals (404). */
const newRouter = () => new Router<AppState, AppContext>({ strict: true, sensitive: true });

/** Middleware run in order as one; the router's own (typed for its richer context) included. */
const inOrder = (middleware: unknown[]) => compose(middleware as Array<compose.Middleware<Ctx>>);

export function createApp(deps: Deps, registry: Registry): App {
  const koa = new Koa<AppState, AppContext>({ proxy: deps.config.trustProxy, maxIpsCount: deps.config.trustProxyHops });
  const limiter = createLimiter(deps.redis, deps.config.redisPrefix, deps.clock, deps.log);
  const changes = sqliteChangeCounter(deps.config.database);
  const lookup = new KeyLookup(deps.db, deps.reads, deps.clock, changes ? { ttlMs: KEY_CACHE_SQLITE_MS, version: changes.version } : { ttlMs: KEY_CACHE_MS }, deps.log);
  const usage = new UsageMeter(deps.db, deps.clock, deps.log, deps.config.usageFlushMs);
  usage.start();
  const requests = deps.config.requestLog ? new RequestLog(deps.db, deps.log) : undefined;
  requests?.start();
  const versions = new Versions(registry);
  const apiDeps = { ...deps, resolve: createResolve(deps.config.webhookDnsServers), stores: createStores(deps.db, deps.reads, registry), versions };
  const version = serviceVersion();

  // Each document is built from the same routes as its router, and serialised once.
  // One document per API version: the latest's built now, an older one's when first asked for.
  const documents = new Map<string, string>();
  const documentAt = (apiVersion: string) => {
    let text = documents.get(apiVersion);
    if (text === undefined) {
      text = JSON.stringify(buildOpenApi(apiAt(api, apiVersion), versions.registryAt(registry, apiVersion), version, { timeoutMs: deps.config.webhookTimeoutMs, retryDelays: deps.config.webhookRetryDelays }, apiVersion));
      documents.set(apiVersion, text);
    }
    return text;
  };
  const api = publicApi(registry, documentAt, { retentionDays: deps.config.retentionMs / DAY_MS, versions });
  documentAt(versions.latest);
  const router = newRouter();
  mount(router, api, apiDeps);
  mountReserved(router, api.base, registry);
  const publicPaths = new Set(api.routes.filter((r) => r.access === 'public').map((r) => `${api.base}${r.path}`));

  let internalDocument = '';
  const internal = internalApi(registry, () => internalDocument, () => documentAt(versions.latest));
  internalDocument = JSON.stringify(buildInternalOpenApi(internal, version));
  const internalRouter = newRouter();
  mount(internalRouter, internal, apiDeps);
  const publicOperations = new Set(internal.routes.filter((r) => r.access === 'public').map((r) => `${r.method.toUpperCase()} ${internal.base}${r.path}`));

  // The public API's path (docs/reference.md section 2: 401 -> 429 -> 404/405 -> 403 -> 400 -> handler).
  const publicChain = inOrder([
    authenticate({ lookup, store: limiter.store, failureLimit: deps.config.authFailureLimit, publicPaths }),
    rateLimit({ store: limiter.store, redisPrefix: deps.config.redisPrefix, clock: deps.clock === systemClock ? undefined : deps.clock }),
    fallback(resolveVersion(versions)),
    dispatchBySegment(router, api.base),
  ]);
  // The internal API's path (section 10): Origin on changes (403) -> session (401) -> 404/405 -> role (403) -> input -> handler.
  const internalChain = inOrder([
    checkOrigin(deps.config.adminOrigins),
    authenticateSession({ db: deps.db, clock: deps.clock, publicOperations }),
    fallback(),
    dispatchBySegment(internalRouter, internal.base),
  ]);

  const page = adminPage();
  const probe = probes(deps);

  // An error of the public API answered before its version was known names one too.
  const provisional = provisionalVersion(versions);
  const isPublic = (path: string) => !isInternal(path) && !isAdminPage(path) && !PROBE_PATHS.has(path);
  const chain = [
    // With traces only: without, not even a layer of the chain (docs/operator.md, Traces).
    ...(tracingOn() ? [traceRequests()] : []),
    observe(deps.clock, identify, errorRenderer(deps.log, (ctx) => isPublic(ctx.path) && provisional(ctx)), [meter(usage, requests), measure(deps.metrics), accessLog(deps.log)]),
    (ctx: Ctx, next: () => Promise<unknown>) => (isInternal(ctx.path) ? internalChain(ctx, next) : isAdminPage(ctx.path) ? page(ctx) : PROBE_PATHS.has(ctx.path) ? probe(ctx) : publicChain(ctx, next)),
  ];
  if (deps.config.trustProxy) koa.use(clientAddress());
  for (const middleware of chain) koa.use(middleware);
  // Errors are rendered by observe(); Koa's own handler would only print them twice.
  koa.silent = true;
  return {
    koa,
    router,
    internalRouter,
    versions,
    close: async () => {
      limiter.close();
      changes?.close();
      await usage.stop();
      await requests?.stop();
    },
  };
}
