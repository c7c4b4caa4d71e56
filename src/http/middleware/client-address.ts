import net from 'node:net';
import type { Ctx } from './context.js';

/**
 * Behind trusted proxies (TRUST_PROXY), the client's address is the one the nearest of them
 * appended to X-Forwarded-For: Koa reads the last `hops` entries (maxIpsCount), never what a
 * client wrote before them, which it could choose (an allowed address, or a new one per guess
 * to escape the failed-authentication limit). An entry that is not an address (a misconfigured
 * proxy's) counts as the socket's address, so what is logged and compared is always one.
 */
export function clientAddress() {
  return (ctx: Ctx, next: () => Promise<unknown>) => {
    if (net.isIP(ctx.ip) === 0) ctx.request.ip = ctx.req.socket.remoteAddress ?? '';
    return next();
  };
}
