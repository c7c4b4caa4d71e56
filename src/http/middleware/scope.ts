import { ApiError } from '../../common/errors.js';
import { authenticated } from '../../common/who.js';
import type { Ctx } from './context.js';

/** RFC 6750: the answer names the scope the key lacks. */
export function requireScope(scope: string) {
  return (ctx: Ctx): void => {
    if (!authenticated(ctx.state.auth).scopes.has(scope)) {
      throw new ApiError('insufficient_scope', `This key lacks the scope ${scope}.`, {
        headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
      });
    }
  };
}
