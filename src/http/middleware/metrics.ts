import type { Metrics } from '../../metrics/registry.js';
import { isAdminPage } from '../admin-page.js';
import type { Ctx } from '../context.js';
import { PROBE_PATHS } from '../probes.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The route's template as the document writes it (`/v1/deals/{id}`); never a raw path, so the series stay few. */
export function routeOf(ctx: Ctx): string {
  const matched = (ctx as unknown as { _matchedRoute?: unknown })._matchedRoute;
  if (typeof matched === 'string') return matched.replace(/:(\w+)/g, '{$1}');
  if (isAdminPage(ctx.path)) return '/admin/*';
  if (PROBE_PATHS.has(ctx.path)) return ctx.path;
  return 'unmatched';
}

/** Counts and times every answer (outside the error renderer, so a thrown error counts with its final status). */
export function measure(metrics: Metrics) {
  return async (ctx: Ctx, next: () => Promise<unknown>) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routeOf(ctx);
      const method = METHODS.has(ctx.method) ? ctx.method : 'OTHER';
      metrics.requests.inc({ route, method, status: String(ctx.status) });
      metrics.duration.observe({ route, method }, (performance.now() - started) / 1000);
      if (ctx.status === 401) metrics.unauthorized.inc();
      if (ctx.status === 429) metrics.rateLimited.inc();
    }
  };
}
