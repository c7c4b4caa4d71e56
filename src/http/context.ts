import type { DefaultContext, ParameterizedContext } from 'koa';

export interface AuthContext {
  key: { id: string; name: string; prefix: string; scopes: string[]; rate_limit: number };
  workspace: { id: string; name: string; plan: string };
  /** The key's scopes that its workspace's plan allows now. */
  scopes: ReadonlySet<string>;
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the next slot frees. */
  reset: number;
}

export interface AppState {
  requestId: string;
  auth?: AuthContext;
  rateLimit?: RateLimitState;
  /** The query string after validation (coerced, defaults applied). */
  query?: Record<string, unknown>;
  /** The JSON body after validation against the route's schema. */
  body?: Record<string, unknown>;
}

export type AppContext = DefaultContext;
export type Ctx = ParameterizedContext<AppState, AppContext>;

/** The authenticated caller; every route runs behind authentication, so it is always there. */
export function authOf(ctx: Ctx): AuthContext {
  const auth = ctx.state.auth;
  if (!auth) throw new Error('route reached without authentication');
  return auth;
}
