import { revocationMarker } from '../../auth/revocation.js';
import type { Clock } from '../../common/clock.js';
import { ApiError } from '../../common/errors.js';
import type { WindowResult, WindowStore } from '../../ratelimit/window.js';
import type { Ctx } from './context.js';
import { invalidToken } from './authenticate.js';
import { count } from '../../common/words.js';

export interface RateLimitOptions {
  store: WindowStore;
  redisPrefix: string;
  /**
   * A clock other than the system's is passed to the store; with the system clock, Redis uses
   * its own time, the same for every process whatever their skew.
   */
  clock: Clock | undefined;
}

/** Every authenticated request counts against its key, whatever its answer; the excess gets 429. */
export function rateLimit(options: RateLimitOptions) {
  const { store, redisPrefix, clock } = options;
  const admit = (ctx: Ctx, limit: number, result: WindowResult, next: () => Promise<unknown>): Promise<unknown> => {
    if (result.revoked) {
      ctx.state.auth = undefined;
      throw invalidToken('The token is unknown or revoked.');
    }
    const reset = Math.max(0, Math.ceil(result.resetMs / 1000));
    ctx.state.rateLimit = { limit, remaining: result.remaining, reset };
    ctx.set('X-RateLimit-Limit', String(limit));
    ctx.set('X-RateLimit-Remaining', String(result.remaining));
    ctx.set('X-RateLimit-Reset', String(reset));
    if (!result.admitted) {
      throw new ApiError('rate_limited', `This key admits ${count(limit, 'request', 'requests')} a minute; wait for a slot to free.`, { headers: { 'Retry-After': '60' } });
    }
    return next();
  };
  // Not an async function: with the in-memory store, a request is counted and passed on with no
  // promise of its own (Koa's chain turns what it throws into a rejection).
  return (ctx: Ctx, next: () => Promise<unknown>): Promise<unknown> => {
    const auth = ctx.state.auth;
    if (!auth) return next();
    const { id, rate_limit: limit } = auth.key;
    const result = store.hit(`key:${id}`, limit, { now: clock?.now(), denyIfExists: revocationMarker(redisPrefix, id) });
    return result instanceof Promise ? result.then((counted) => admit(ctx, limit, counted, next)) : admit(ctx, limit, result, next);
  };
}
