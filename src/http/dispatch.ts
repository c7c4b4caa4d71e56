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

/**
 * A router's routes and its 405/501/OPTIONS answers, dispatched by the first segment of the path
 * below `base`: @koa/router tests every route's pattern against every request, with a debug()
 * call each (a list request tested 48 routes: 7 KB of garbage and about 4 microseconds a
 * request), so each first segment gets a router of its own holding only its routes, in their
 * order. A route whose first segment is a parameter is in each of them and in the one for any
 * other path. The router given keeps every route (the documents and their tests read it).
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
  return (ctx, next) => (bySegment.get(segmentOf(ctx.path, base) ?? '') ?? rest)(ctx, next);
}
