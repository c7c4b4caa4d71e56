import type { KeyLookup } from '../../auth/lookup.js';
import { looksLikeToken } from '../../auth/tokens.js';
import { ApiError } from '../../common/errors.js';
import type { WindowStore } from '../../ratelimit/window.js';
import type { Ctx } from './context.js';

const REALM = 'Bearer realm="workspace"';
const BEARER = /^Bearer +(\S+) *$/i;

export function invalidToken(detail: string): ApiError {
  return new ApiError('invalid_token', detail, { headers: { 'WWW-Authenticate': `${REALM}, error="invalid_token"` } });
}

export interface AuthenticateOptions {
  lookup: KeyLookup;
  store: WindowStore;
  /** Failed authentications admitted per client address and minute; past it, 429 instead of 401. */
  failureLimit: number;
  /** Paths served without a token (the public OpenAPI document). */
  publicPaths?: ReadonlySet<string>;
}

export function authenticate(options: AuthenticateOptions) {
  const { lookup, store, failureLimit, publicPaths } = options;

  async function refuse(ctx: Ctx, detail: string): Promise<never> {
    const failures = await store.hit(`authfail:${ctx.ip}`, failureLimit, {});
    if (!failures.admitted) {
      throw new ApiError('rate_limited', 'Too many failed authentications from this address; wait a minute.', { headers: { 'Retry-After': '60' } });
    }
    throw invalidToken(detail);
  }

  return async (ctx: Ctx, next: () => Promise<unknown>) => {
    if (publicPaths?.has(ctx.path)) return next();
    const header = ctx.get('authorization');
    if (!header) {
      throw new ApiError('missing_token', 'Send your API key as Authorization: Bearer <token>.', { headers: { 'WWW-Authenticate': REALM } });
    }
    const token = BEARER.exec(header)?.[1];
    if (!token) return refuse(ctx, 'The Authorization header must be "Bearer <token>".');
    if (!looksLikeToken(token)) return refuse(ctx, 'The token is not a Workspace API key.');
    const auth = await lookup.find(token);
    if (!auth) return refuse(ctx, 'The token is unknown or revoked.');
    ctx.state.auth = auth;
    return next();
  };
}
