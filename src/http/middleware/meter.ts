import type { UsageMeter } from '../../admin/usage.js';
import type { Ctx } from './context.js';

/**
 * Counts each answer to a key, after it is final (errors included: this runs outside the error
 * renderer). In memory only: the meter writes in batches, off the request path.
 */
export function meter(usage: UsageMeter) {
  return async (ctx: Ctx, next: () => Promise<unknown>) => {
    await next();
    const auth = ctx.state.auth;
    if (auth) usage.count(auth.key.id, auth.workspace.id, ctx.status);
  };
}
