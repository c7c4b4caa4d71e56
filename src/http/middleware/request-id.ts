import { randomUUID } from 'node:crypto';
import type { Ctx } from '../context.js';

/** A client's own id is kept if it is sane (short, printable, no separators that break logs). */
export const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

export function requestId() {
  return async (ctx: Ctx, next: () => Promise<unknown>) => {
    const incoming = ctx.get('x-request-id');
    const id = SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}
