import { randomUUID } from 'node:crypto';
import { SANE_REQUEST_ID } from '../../common/wire.js';
import type { Ctx } from './context.js';

/** Gives the request its id: the caller's X-Request-Id when it is sane, else a new UUID; echoed in the answer. */
export function identify(ctx: Ctx): void {
  const incoming = ctx.get('x-request-id');
  const id = SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
}
