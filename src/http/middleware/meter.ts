import type { RequestLog } from '../../admin/request-log.js';
import type { UsageMeter } from '../../admin/usage.js';
import type { Observer } from './observe.js';
import { routeOf } from './route-template.js';

/**
 * Records each answer to a key after it is final (errors included: this runs after the error
 * renderer): counted in its hourly usage, and, when the request log is on, kept in the key's
 * log, refusals of the key itself (expired, from an address its allowlist does not hold) too.
 * In memory only: both write in batches, off the request path.
 */
export function meter(usage: UsageMeter, requests: RequestLog | undefined): Observer {
  return (ctx, { at, started }) => {
    const auth = ctx.state.auth;
    if (auth) usage.count(auth.key.id, auth.workspace.id, ctx.status);
    const keyId = auth?.key.id ?? ctx.state.refusedKey;
    if (requests && keyId !== undefined) {
      requests.record({
        keyId,
        at,
        method: ctx.method,
        route: routeOf(ctx),
        path: ctx.path,
        status: ctx.status,
        errorCode: ctx.state.errorCode ?? null,
        durationUs: Math.round((performance.now() - started) * 1000),
        requestId: ctx.state.requestId,
        ip: ctx.ip,
      });
    }
  };
}
