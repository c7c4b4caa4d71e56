import type { Logger } from 'pino';
import type { Ctx } from './context.js';

/** One line per request, after the answer is final. Never the Authorization header. */
export function accessLog(log: Logger) {
  return async (ctx: Ctx, next: () => Promise<unknown>) => {
    if (!log.isLevelEnabled('info')) return next();
    const started = performance.now();
    try {
      await next();
    } finally {
      const ms = Math.round((performance.now() - started) * 100) / 100;
      log.info({ request_id: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms, key: ctx.state.auth?.key.id }, 'request');
    }
  };
}
