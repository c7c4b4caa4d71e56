import type { Logger } from 'pino';
import type { Observer } from './observe.js';

/** One line per request, after the answer is final. Never the Authorization header. */
export function accessLog(log: Logger): Observer {
  return (ctx, { started }) => {
    if (!log.isLevelEnabled('info')) return;
    const ms = Math.round((performance.now() - started) * 100) / 100;
    log.info({ request_id: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms, key: ctx.state.auth?.key.id }, 'request');
  };
}
