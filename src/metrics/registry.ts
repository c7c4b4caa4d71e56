import type { Knex } from 'knex';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { asNumber } from '../db/decode.js';
import type { Redis } from '../db/redis.js';

/**
 * The Prometheus series of one process (docs/reference.md section 12), in a registry of its own. Label
 * values are bounded: route templates (never raw paths or ids), methods, statuses, outcomes.
 * What is read from the database (deliveries due, their age, events awaiting fan-out) is read
 * at scrape time, with two indexed queries.
 */
export function createMetrics(deps: { db: Knex; redis: Redis | undefined; redisConfigured: boolean; now: () => number }) {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({ name: 'wsapi_http_requests_total', help: 'Requests answered, by route template, method and status.', labelNames: ['route', 'method', 'status'] as const, registers });
  const duration = new Histogram({
    name: 'wsapi_http_request_duration_seconds',
    help: 'Time to answer a request, by route template and method.',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });
  const unauthorized = new Counter({ name: 'wsapi_http_unauthorized_total', help: 'Requests answered 401 (no, bad or revoked credentials).', registers });
  const rateLimited = new Counter({ name: 'wsapi_http_rate_limited_total', help: 'Requests answered 429 (a key over its limit, or too many failed authentications).', registers });
  new Gauge({
    name: 'wsapi_rate_limiter_fallback',
    help: '1 while Redis is configured but unreachable, so limits are counted in this process alone; else 0.',
    registers,
    collect() {
      this.set(deps.redisConfigured && !deps.redis?.isReady() ? 1 : 0);
    },
  });
  const deliveries = new Counter({ name: 'wsapi_webhook_deliveries_total', help: 'Delivery attempts recorded by this process, by outcome: succeeded, retrying (failed, another attempt scheduled), failed (no attempt left).', labelNames: ['outcome'] as const, registers });
  const workerRounds = new Counter({ name: 'wsapi_webhook_worker_rounds_total', help: 'Rounds of this process\'s delivery worker (a fan-out, then a claim), by what they found: nothing (it sleeps), some (it pauses briefly, to gather more) or full (a full batch: it goes again at once).', labelNames: ['found'] as const, registers });
  const deliveryDuration = new Histogram({ name: 'wsapi_webhook_delivery_duration_seconds', help: 'Time of one delivery attempt, until the answer or the failure.', buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers });
  const due = new Gauge({ name: 'wsapi_webhook_deliveries_due', help: 'Pending deliveries whose time has come (waiting for a worker).', registers });
  const oldest = new Gauge({ name: 'wsapi_webhook_oldest_due_age_seconds', help: 'How long the longest-waiting due delivery has been due (0 when none is).', registers });
  new Gauge({
    name: 'wsapi_webhook_oldest_pending_age_seconds',
    help: 'For each subscription with deliveries not yet done (pending or held), how long ago its oldest was made: a line held behind a failing delivery (per_object ordering) grows it.',
    labelNames: ['webhook'] as const,
    registers,
    async collect() {
      const now = deps.now();
      const rows = await (deps.db('webhook_deliveries').select('subscription_id').min({ at: 'created_at' }).whereIn('status', ['pending', 'held']).groupBy('subscription_id') as Promise<Array<{ subscription_id: string; at: number | string }>>).catch(() => undefined);
      // The database away: the last values stay, and the scrape still answers (readiness says why).
      if (rows === undefined) return;
      this.reset();
      for (const row of rows) this.set({ webhook: row.subscription_id }, Math.max(0, (now - asNumber(row.at)) / 1000));
    },
  });
  const awaiting = new Gauge({
    name: 'wsapi_events_awaiting_fanout',
    help: 'Committed events not yet turned into deliveries.',
    registers,
    async collect() {
      const now = deps.now();
      // The database away: these three keep their last values, and the scrape still answers (readiness says why).
      const read = Promise.all([
        deps.db('webhook_deliveries').where('status', 'pending').where('next_attempt_at', '<=', now).count({ n: '*' }).min({ at: 'next_attempt_at' }).first() as Promise<{ n: number | string; at: number | string | null } | undefined>,
        deps.db('events_pending').count({ n: '*' }).first() as Promise<{ n: number | string } | undefined>,
      ]).catch(() => undefined);
      const rows = await read;
      if (rows === undefined) return;
      const [dueRow, eventsRow] = rows;
      due.set(asNumber(dueRow?.n ?? 0));
      oldest.set(dueRow?.at == null ? 0 : Math.max(0, (now - asNumber(dueRow.at)) / 1000));
      this.set(asNumber(eventsRow?.n ?? 0));
    },
  });
  return { registry, requests, duration, unauthorized, rateLimited, deliveries, deliveryDuration, awaiting, workerRounds };
}

export type Metrics = ReturnType<typeof createMetrics>;
