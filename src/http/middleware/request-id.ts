import { randomUUID } from 'node:crypto';
import { SANE_REQUEST_ID } from '../../common/wire.js';
import type { Ctx } from './context.js';


export function requestId() {
  return async (ctx: Ctx, next: () => Promise<unknown>) => {
    const incoming = ctx.get('x-request-id');
    const id = SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}
