import Router from '@koa/router';
import compose from 'koa-compose';
import type { AppContext, AppState, Ctx } from './middleware/context.js';

/** The first segment of a path below `base` (`/v1/deals/x` -> `deals`), or undefined for a path outside it. */
export function segmentOf(path: string, base: string): string | undefined {
  if (!path.startsWith(`${base}/`)) return undefined;
  const rest = path.slice(base.length + 1);
  const end = rest.search(/[/{]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/** A route path with no parameter or wildcard: it names one path, and only that path. */
const isLiteral = (path: string | RegExp): path is string => typeof path === 'string' && !/[:{*(]/.test(path);

/**
 * A router's routes and its 405/501/OPTIONS answers, dispatched by the path itself or by its
 * first segment below `base`.
 * - A path that a route names literally (`/v1/deals/batch`) is answered by the routes of that
 *   path alone, whatever the method: as OpenAPI matches paths, a concrete path comes before a
 *   templated one, so `GET /v1/deals/batch` is 405 with `Allow: POST`, not `GET
 *   /v1/deals/{id}` for an id "batch", and OPTIONS on it names POST alone.
 * - Any other path goes to the routes of its first segment: @koa/router tests every route's
 *   pattern against every request, with a debug() call each (a list request tested 48 routes:
 *   7 KB of garbage and about 4 microseconds a request), so each first segment gets a router
 *   of its own holding only its routes, in their order. A route whose first segment is a
 *   parameter is in each of them and in the one for any other path.
 * The router given keeps every route (the documents and their tests read it).
 */
export function dispatchBySegment(router: Router<AppState, AppContext>, base: string): (ctx: Ctx, next: () => Promise<unknown>) => Promise<unknown> {
  type Layers = Router<AppState, AppContext>['stack'];
  // Each route's own segment, or undefined for one met below any segment.
  const keys = router.stack.map((layer) => {
    const segment = segmentOf(String(layer.path), base);
    return segment === undefined || segment === '' || segment.startsWith(':') ? undefined : segment;
  });
  const routerOf = (layers: Layers) => {
    const own = new Router<AppState, AppContext>(router.opts);
    own.stack.push(...layers);
    return compose([own.routes(), own.allowedMethods()] as unknown as Array<compose.Middleware<Ctx>>);
  };
  // In router order: a segment's routes and those of any segment, where each stood.
  const routesOf = (key: string | undefined) => router.stack.filter((_, i) => keys[i] === undefined || keys[i] === key);
  const bySegment = new Map([...new Set(keys)].flatMap((key) => (key === undefined ? [] : [[key, routerOf(routesOf(key))] as const])));
  const rest = routerOf(routesOf(undefined));
  const literals = new Set(router.stack.map((layer) => layer.path).filter(isLiteral));
  const byPath = new Map([...literals].map((path) => [path, routerOf(router.stack.filter((layer) => layer.path === path))] as const));
  return (ctx, next) => (byPath.get(ctx.path) ?? bySegment.get(segmentOf(ctx.path, base) ?? '') ?? rest)(ctx, next);
}
