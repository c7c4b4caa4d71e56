import { ApiError } from '../../common/errors.js';
import type { Ctx } from './context.js';

/**
 * Turns what the router leaves unanswered into problem+json: no route (404), a route without
 * this method (405, the router has set Allow), a method the router does not know (501).
 */
export function fallback(first?: (ctx: Ctx) => void) {
  // Not an async function: what the router left unanswered is checked in a reaction to the chain
  // (an async frame with its await would cost a promise more on every request).
  return (ctx: Ctx, next: () => Promise<unknown>): Promise<void> => {
    // What the API does for every request it routes (the public API: its version), in this layer rather than one of its own.
    first?.(ctx);
    return next().then(() => unanswered(ctx));
  };
}

/** Throws the problem for what the router left without a body; nothing when it has one. */
function unanswered(ctx: Ctx): void {
  if (ctx.body !== undefined && ctx.body !== null) return;
  if (ctx.status === 405) throw new ApiError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}.`);
  if (ctx.status === 501) throw new ApiError('not_implemented', `${ctx.method} is not implemented.`);
  if (ctx.status === 404) throw new ApiError('not_found', `No endpoint at ${ctx.path}.`);
}
