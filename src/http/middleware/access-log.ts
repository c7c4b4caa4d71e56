import type { Logger } from 'pino';
import type { Observer } from './observe.js';

/**
 * One line per request, after the answer is final. Never the Authorization header: the line
 * has these fields and no other, none a secret (the key's id, never its token), so it skips the
 * logger's redaction, which copied each line's object to look for secrets by name (about 5 KB
 * of garbage a request).
 */
export function accessLog(parent: Logger): Observer {
  const log = parent.child({}, { redact: [] });
  return (ctx, { started }) => {
    if (!log.isLevelEnabled('info')) return;
    const ms = Math.round((performance.now() - started) * 100) / 100;
    log.info({ request_id: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms, key: ctx.state.auth?.key.id }, 'request');
  };
}
