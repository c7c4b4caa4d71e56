import type { KeyLookup } from '../../auth/lookup.js';
import type { AuthContext } from '../../common/who.js';
import { malformedToken } from '../../auth/tokens.js';
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

  /** The API version of a valid key on a public path (its document describes it); nothing is refused there. */
  async function pinOf(header: string): Promise<string | undefined> {
    const token = header ? BEARER.exec(header)?.[1] : undefined;
    if (!token || malformedToken(token)) return undefined;
    const auth = lookup.cached(token) ?? (await lookup.find(token).catch(() => null));
    return auth && !lookup.ended(auth) && !lookup.expired(auth) ? auth.key.api_version : undefined;
  }

  /** A key found (or not) for `token`: admitted into the request, or refused. */
  function admit(ctx: Ctx, auth: AuthContext | null, next: () => Promise<unknown>): Promise<unknown> {
    if (!auth || lookup.ended(auth)) return refuse(ctx, 'The token is unknown or revoked.');
    if (lookup.expired(auth)) {
      ctx.state.refusedKey = auth.key.id;
      const at = new Date(auth.key.expires_at as number).toISOString();
      throw new ApiError('key_expired', `The key expired at ${at}.`, { headers: { 'WWW-Authenticate': `${REALM}, error="invalid_token", error_description="The key expired at ${at}"` } });
    }
    if (auth.allows && !auth.allows(ctx.ip)) {
      ctx.state.refusedKey = auth.key.id;
      throw new ApiError('ip_not_allowed', `This key may not be used from ${ctx.ip}: its allowlist does not include that address.`);
    }
    ctx.state.auth = auth;
    return next();
  }

  /** A token this process has not met lately: looked up in the database, then admitted or refused. */
  async function lookUp(ctx: Ctx, token: string, next: () => Promise<unknown>): Promise<unknown> {
    let auth: AuthContext | null;
    try {
      auth = await lookup.find(token);
    } catch (err) {
      // The database is away: the answer (503) still goes in the key's log, if this process knew the key.
      ctx.state.refusedKey = lookup.lastKnown(token);
      throw err;
    }
    return admit(ctx, auth, next);
  }

  // Not an async function: a key this process knows is admitted with no promise of its own (Koa's
  // chain turns what it throws into a rejection).
  return (ctx: Ctx, next: () => Promise<unknown>): Promise<unknown> => {
    if (publicPaths?.has(ctx.path)) {
      return pinOf(ctx.get('authorization')).then((pinned) => {
        ctx.state.pinned = pinned;
        return next();
      });
    }
    const header = ctx.get('authorization');
    if (!header) {
      throw new ApiError('missing_token', 'Send your API key as Authorization: Bearer <token>.', { headers: { 'WWW-Authenticate': REALM } });
    }
    // What can be told from the header alone is refused with no I/O: no lookup, and no count
    // against the address (a token that fails its checksum could not be one of ours).
    const token = BEARER.exec(header)?.[1];
    if (!token) throw invalidToken('The Authorization header must be "Bearer <token>".');
    const auth = lookup.cached(token);
    if (auth !== undefined) return admit(ctx, auth, next);
    const malformed = malformedToken(token);
    if (malformed) throw invalidToken(malformed);
    return lookUp(ctx, token, next);
  };
}
