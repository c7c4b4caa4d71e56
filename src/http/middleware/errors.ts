import type { Logger } from 'pino';
import { isUnavailable } from '../../db/dialect.js';
import { ApiError, CommitOutcomeUnknown, outcomeUnknown, toProblem } from '../../common/errors.js';
import type { Ctx } from './context.js';

/**
 * Renders what the chain threw (observe.ts catches it) as problem+json. Unknown errors are logged in
 * full and answered with a generic 500; no stack trace or SQL reaches a client. `headersOf` sets
 * the headers every answer of the request's API carries, when they are not set yet.
 */
export function errorRenderer(log: Logger, headersOf?: (ctx: Ctx) => void) {
  return (ctx: Ctx, caught: unknown): void => {
    // What every answer of its API carries, for an error that came before it was set (the API version of a 401).
    headersOf?.(ctx);
    let error: ApiError;
    if (caught instanceof ApiError) {
      error = caught;
    } else if (caught instanceof CommitOutcomeUnknown) {
      log.error({ err: caught.cause, request_id: ctx.state.requestId }, 'database connection lost while committing; outcome unknown');
      error = outcomeUnknown(ctx.method === 'POST' && ctx.get('idempotency-key') !== '');
    } else if (isUnavailable(caught)) {
      log.error({ err: caught, request_id: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'database unavailable');
      error = new ApiError('unavailable', 'The service cannot reach its database; nothing was changed. Try again shortly.', { headers: { 'Retry-After': '5' } });
    } else {
      log.error({ err: caught, request_id: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'unhandled error');
      error = new ApiError('internal_error', `Something went wrong on our side; quote request id ${ctx.state.requestId}.`);
    }
    for (const [name, value] of Object.entries(error.extras.headers ?? {})) ctx.set(name, value);
    ctx.state.errorCode = error.code;
    ctx.status = error.status;
    ctx.type = 'application/problem+json';
    ctx.body = JSON.stringify(toProblem(error, ctx.state.requestId));
  };
}
