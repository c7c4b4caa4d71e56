import type Router from '@koa/router';
import { scopeCatalog } from '../../auth/scopes.js';
import { eventCatalog } from '../../events/catalog.js';
import type { Registry } from '../../kernel/registry.js';
import { WINDOW_MS } from '../../ratelimit/window.js';
import { authOf, type AppContext, type AppState, type Ctx } from '../context.js';
import { validateQuery } from '../middleware/query.js';

/** Endpoints any valid key may call, whatever its scopes. */
export function mountMeta(router: Router<AppState, AppContext>, registry: Registry): void {
  const noQuery = validateQuery(registry.validateEmptyQuery);
  const scopes = scopeCatalog(registry);
  const events = { data: eventCatalog(registry) };

  router.get('/v1/health', noQuery, (ctx: Ctx) => {
    const { key, workspace } = authOf(ctx);
    const rate = ctx.state.rateLimit;
    ctx.body = {
      status: 'ok',
      key: { id: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes, rate_limit: key.rate_limit },
      workspace,
      rate_limit: { limit: rate?.limit ?? key.rate_limit, remaining: rate?.remaining ?? 0, reset: rate?.reset ?? 0, window_seconds: WINDOW_MS / 1000 },
    };
  });

  router.get('/v1/scopes', noQuery, (ctx: Ctx) => {
    const granted = authOf(ctx).scopes;
    ctx.body = { data: scopes.map((s) => ({ ...s, granted: granted.has(s.name) })) };
  });

  router.get('/v1/events', noQuery, (ctx: Ctx) => {
    ctx.body = events;
  });
}
