import type { Deps } from './deps.js';
import { sweepSessions } from './admin/sessions.js';
import { sweepUsage } from './admin/usage.js';
import { sweepRequestLog } from './admin/request-log.js';
import { sweepExpiredKeys } from './kernel/write/index.js';
import { sweepRetention } from './events/retention.js';

const EVERY_MS = 10 * 60 * 1000;

/**
 * Periodic clean-up a server process does beside serving: expired idempotency keys and sessions,
 * failed sign-ins past the throttling window, usage buckets older than 30 days (all are ignored once expired; this only
 * reclaims their space), the keys' request logs past RETENTION_DAYS, and events past RETENTION_DAYS with their deliveries and attempts. A failure is logged and retried at
 * the next tick; it never stops the server.
 */
export function startHousekeeping(deps: Pick<Deps, 'db' | 'clock' | 'log' | 'config'>): { stop(): void } {
  const tick = async () => {
    try {
      const removed = await sweepExpiredKeys(deps.db, deps.clock.now());
      if (removed > 0) deps.log.info({ removed }, 'expired idempotency keys removed');
      const ended = await sweepSessions(deps.db, deps.clock.now());
      if (ended > 0) deps.log.info({ removed: ended }, 'expired sessions and old failed sign-ins removed');
      const buckets = await sweepUsage(deps.db, deps.clock.now());
      if (buckets > 0) deps.log.info({ removed: buckets }, 'usage older than 30 days removed');
      const requests = await sweepRequestLog(deps.db, deps.clock.now(), deps.config.retentionMs);
      if (requests > 0) deps.log.info({ removed: requests }, 'request log entries past the retention window removed');
      const events = await sweepRetention(deps.db, deps.clock.now(), deps.config.retentionMs);
      if (events.removed > 0) deps.log.info({ removed: events.removed, longest_batch_ms: Math.round(events.longestBatchMs), retention_days: deps.config.retentionMs / 86_400_000 }, 'events past the retention window removed, with their deliveries and attempts');
    } catch (err) {
      deps.log.warn({ err }, 'housekeeping failed; will retry');
    }
  };
  const timer = setInterval(() => void tick(), EVERY_MS);
  timer.unref();
  void tick();
  return { stop: () => clearInterval(timer) };
}
