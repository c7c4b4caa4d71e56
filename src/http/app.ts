import Router from '@koa/router';
import Koa from 'koa';
import { KEY_CACHE_MS, KEY_CACHE_SQLITE_MS, KeyLookup } from '../auth/lookup.js';
import { sqliteChangeCounter } from '../db/changes.js';
import { systemClock, type Deps } from '../deps.js';
import type { Registry } from '../kernel/registry.js';
import { createLimiter } from '../ratelimit/limiter.js';
import type { AppContext, AppState } from './context.js';
import { accessLog } from './middleware/access-log.js';
import { authenticate } from './middleware/authenticate.js';
import { errorRenderer } from './middleware/errors.js';
import { fallback } from './middleware/fallback.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requestId } from './middleware/request-id.js';
import { mount, mountReserved } from './mount.js';
import { publicApi } from '../api/public.js';
import { createResolve } from '../webhooks/ssrf.js';
import { buildOpenApi, serviceVersion } from '../openapi/document.js';

export interface App {
  koa: Koa<AppState, AppContext>;
  /** Every route, for tests that hold the OpenAPI document to them. */
  router: Router<AppState, AppContext>;
  close(): void;
}

export function createApp(deps: Deps, registry: Registry): App {
  const koa = new Koa<AppState, AppContext>({ proxy: deps.config.trustProxy });
  const limiter = createLimiter(deps.redis, deps.config.redisPrefix, deps.clock, deps.log);
  const changes = sqliteChangeCounter(deps.config.database);
  const lookup = new KeyLookup(deps.db, deps.clock, changes ? { ttlMs: KEY_CACHE_SQLITE_MS, version: changes.version } : { ttlMs: KEY_CACHE_MS }, deps.log);

  // Paths as the document writes them: /v1/deals/ and /V1/Deals are not /v1/deals (404).
  const router = new Router<AppState, AppContext>({ strict: true, sensitive: true });
  // The document is built from the same routes, and serialised once.
  let document = '';
  const api = publicApi(registry, () => document);
  document = JSON.stringify(buildOpenApi(api, registry, serviceVersion(), { timeoutMs: deps.config.webhookTimeoutMs, retryDelays: deps.config.webhookRetryDelays }));
  mount(router, api, { ...deps, resolve: createResolve(deps.config.webhookDnsServers) });
  mountReserved(router, api.base, registry);
  const publicPaths = new Set(api.routes.filter((r) => r.access === 'public').map((r) => `${api.base}${r.path}`));

  // The request path, top to bottom (API.md section 2: 401 -> 429 -> 404/405 -> 403 -> 400 -> handler).
  const chain = [
    requestId(),
    accessLog(deps.log),
    errorRenderer(deps.log),
    authenticate({ lookup, store: limiter.store, failureLimit: deps.config.authFailureLimit, publicPaths }),
    rateLimit({ store: limiter.store, redisPrefix: deps.config.redisPrefix, clock: deps.clock === systemClock ? undefined : deps.clock }),
    fallback(),
    router.routes(),
    router.allowedMethods(),
  ];
  for (const middleware of chain) koa.use(middleware);
  // Errors are rendered by errorRenderer; Koa's own handler would only print them twice.
  koa.silent = true;
  return {
    koa,
    router,
    close: () => {
      limiter.close();
      changes?.close();
    },
  };
}
