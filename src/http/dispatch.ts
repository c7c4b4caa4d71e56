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
  const keyed = new Map<string, Router<AppState, AppContext>['stack']>();
  const anywhere: Router<AppState, AppContext>['stack'] = [];
  for (const layer of router.stack) {
    const segment = segmentOf(String(layer.path), base);
    if (segment === undefined || segment === '' || segment.startsWith(':')) anywhere.push(layer);
    else if (!keyed.has(segment)) keyed.set(segment, []);
  }
  for (const layer of router.stack) {
    const segment = segmentOf(String(layer.path), base);
    // In router order: a route of every segment lands in each of them where it stood.
    for (const [key, layers] of keyed) if (segment === key || anywhere.includes(layer)) layers.push(layer);
  }
  const routerOf = (layers: Router<AppState, AppContext>['stack']) => {
    const own = new Router<AppState, AppContext>(router.opts);
    own.stack.push(...layers);
    return compose([own.routes(), own.allowedMethods()] as unknown as Array<compose.Middleware<Ctx>>);
  };
  const bySegment = new Map([...keyed].map(([key, layers]) => [key, routerOf(layers)]));
  const rest = routerOf(anywhere);
  return (ctx, next) => (bySegment.get(segmentOf(ctx.path, base) ?? '') ?? rest)(ctx, next);
}
