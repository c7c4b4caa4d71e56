import type { Knex } from 'knex';
import { findSession, SESSION_COOKIE } from '../../admin/sessions.js';
import type { Clock } from '../../common/clock.js';
import { ApiError } from '../../common/errors.js';
import type { Ctx } from './context.js';

const UNSAFE = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/**
 * Cross-site request forgery: a change to the administration area must come from a page of the
 * service itself. Every unsafe method carries an Origin naming the service's own origin (as the
 * request reaches it) or one of ADMIN_ORIGINS; anything else is 403, whatever the cookie says.
 */
export function checkOrigin(allowed: readonly string[]) {
  return async (ctx: Ctx, next: () => Promise<unknown>) => {
    if (UNSAFE.has(ctx.method)) {
      const origin = ctx.get('origin');
      // The service's own origin as this request reached it (Koa 3's ctx.origin is the header itself).
      const own = `${ctx.protocol}://${ctx.host}`;
      if (origin === '' || (origin !== own && !allowed.includes(origin))) {
        throw new ApiError('forbidden_origin', origin === '' ? 'A change needs an Origin header naming this service; send it from the administration page.' : `Changes are accepted from this service's own pages only, not from ${origin.slice(0, 200)}.`);
      }
    }
    return next();
  };
}

/**
 * The internal API's authentication: the session cookie, looked up in the database on every
 * request (so a sign-out, a disabled user or a new password ends it in every process at once).
 * An API key is never accepted here.
 */
export function authenticateSession(options: { db: Knex; clock: Clock; publicOperations: ReadonlySet<string> }) {
  const { db, clock, publicOperations } = options;
  return async (ctx: Ctx, next: () => Promise<unknown>) => {
    if (publicOperations.has(`${ctx.method} ${ctx.path}`)) return next();
    const token = ctx.cookies.get(SESSION_COOKIE) ?? '';
    const session = token ? await findSession(db, token, clock.now()) : null;
    if (!session) {
      const detail = token
        ? 'Your session has ended (signed out, expired, or your account changed); sign in again.'
        : ctx.get('authorization')
          ? 'The internal API takes a signed-in session, never an API key; sign in with POST /internal/v1/session.'
          : 'Sign in first: POST /internal/v1/session with your email and password.';
      throw new ApiError('not_signed_in', detail);
    }
    ctx.state.session = session;
    return next();
  };
}

/** A user whose role is not enough for this change: 403, naming the role needed. */
export function requireRole(role: string) {
  return (ctx: Ctx): void => {
    const session = ctx.state.session;
    if (!session || (role === 'admin' && session.user.role !== 'admin')) {
      throw new ApiError('insufficient_role', `Only an ${role} may do this; you are signed in as a ${session?.user.role ?? 'guest'}.`);
    }
  };
}
