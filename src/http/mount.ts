import type Router from '@koa/router';
import type { ApiDeps, Api, BodySpec, Reply, Route, RouteInput } from './route.js';
import { ApiError } from '../common/errors.js';
import { NUL } from '../common/wire.js';
import { createQueryAjv, createSchemaAjv, EMPTY_QUERY_SCHEMA, type JsonSchema } from '../kernel/model/index.js';
import type { Registry } from '../kernel/registry/index.js';
import type { AppContext, AppState, Ctx } from './middleware/context.js';
import { jsonBody } from './middleware/body.js';
import { validateQuery } from './middleware/query.js';
import { requireScope } from './middleware/scope.js';
import { requireRole } from './middleware/session.js';

/** `/deals/{id}` -> `/deals/:id`. */
const routerPath = (template: string) => template.replace(/\{(\w+)\}/g, ':$1');

/**
 * Mounts an API's routes: each gets, in the contract's order, its scope (or role) check, its query check,
 * its body check (schemas compiled here, once) and then its handler, which sees checked input
 * and answers with data.
 */
export function mount(router: Router<AppState, AppContext>, api: Api, deps: ApiDeps): void {
  const queryAjv = createQueryAjv();
  const schemaAjv = createSchemaAjv();
  const noQuery = validateQuery(queryAjv.compile(EMPTY_QUERY_SCHEMA));
  // A schema met again (one older shape serves several versions) is compiled once.
  const compiled = new Map<unknown, Check>();
  const once = (key: unknown, make: () => Check) => compiled.get(key) ?? compiled.set(key, make()).get(key)!;
  const checksOf = (route: Route, query: JsonSchema | undefined, body: BodySpec | undefined): Check[] => {
    const checks: Check[] = [];
    if (typeof route.access === 'string' && route.access !== 'public') checks.push(api.credentials === 'key' ? requireScope(route.access) : requireRole(route.access));
    if (route.path.includes('{')) checks.push(noNulInPath);
    checks.push(query ? once(query, () => validateQuery(queryAjv.compile(query))) : noQuery);
    if (body) {
      const { schema, readOnly = [], required, unknownAtTop } = body;
      checks.push(once(body, () => jsonBody(schemaAjv.compile(schema), new Set(readOnly), required ? new Set(required) : undefined, unknownAtTop)));
    }
    return checks;
  };
  for (const route of api.routes) {
    const checks = checksOf(route, route.query, route.body);
    // The checks of callers at an older version whose input differs (none: the latest's).
    const older = new Map<string, Check[]>();
    for (const version of route.olderInput ? (api.olderVersions ?? []) : []) {
      const input = route.olderInput?.(version);
      if (input) older.set(version, checksOf(route, input.query ?? route.query, input.body ?? route.body));
    }
    router[route.method](`${api.base}${routerPath(route.path)}`, inOrder(checks, older, handler(route, deps, api.credentials === 'session')));
  }
}

/** A check of a request's input: throws an ApiError to refuse it; a promise only when it reads the body. */
type Check = (ctx: Ctx) => void | Promise<void>;

/** No id holds U+0000, so a path parameter that does names nothing: 404, before any lookup. */
function noNulInPath(ctx: Ctx): void {
  // The path as sent: U+0000 reaches it only as %00 (the parser refuses it raw).
  if (!ctx.path.includes('%00')) return;
  for (const value of Object.values(ctx.params as Record<string, string>)) {
    if (value.includes(NUL)) throw new ApiError('not_found', `Nothing is at ${ctx.path}: no id holds the character U+0000 (NUL).`);
  }
}

/**
 * A route's checks, then its handler, as one middleware: an awaited layer of the router's chain
 * per check cost a promise and an async frame each on every request.
 */
function inOrder(latest: readonly Check[], older: ReadonlyMap<string, readonly Check[]>, handle: (ctx: Ctx) => Promise<void>) {
  return async (ctx: Ctx) => {
    const checks = older.size === 0 ? latest : (older.get(ctx.state.apiVersion ?? '') ?? latest);
    for (const check of checks) {
      const pending = check(ctx);
      if (pending) await pending;
    }
    await handle(ctx);
  };
}

function handler(route: Route, deps: ApiDeps, cookies: boolean) {
  // The reply is written in a reaction to the handler's answer rather than after an await in an
  // async frame (a promise less a request); a handler that answers with a value is waited for too.
  return (ctx: Ctx): Promise<void> => Promise.resolve(route.handle(inputOf(ctx))).then((reply) => answer(ctx, reply));

  function inputOf(ctx: Ctx): RouteInput {
    return {
      deps,
      auth: ctx.state.auth,
      session: ctx.state.session,
      ip: ctx.ip,
      secure: ctx.secure,
      rateLimit: ctx.state.rateLimit,
      method: ctx.method,
      path: ctx.path,
      params: ctx.params as Record<string, string>,
      query: ctx.state.query ?? {},
      body: ctx.state.body ?? {},
      headers: ctx.headers,
      // Koa's cookies where a session lives (made per request when asked for: not on the public API's path).
      cookies: cookies ? ctx.cookies : undefined,
      version: ctx.state.apiVersion ?? '',
    };
  }
}

/** Writes a handler's reply into the response. */
function answer(ctx: Ctx, reply: Reply): void {
  ctx.status = reply.status ?? 200;
  for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
  if (reply.text !== undefined) {
    ctx.type = reply.type ?? 'application/json; charset=utf-8';
    ctx.body = reply.text;
  } else if (reply.body !== undefined) {
    ctx.body = reply.body;
  }
}

/** A reserved path answers 501 to every method on it and below, after authentication and before any input check. */
export function mountReserved(router: Router<AppState, AppContext>, base: string, registry: Registry): void {
  for (const reserved of registry.reserved) {
    router.all(`${base}${reserved.path}{/*rest}`, () => {
      throw new ApiError('not_implemented', `${reserved.path} is reserved and not implemented yet. ${reserved.description}`);
    });
  }
}
