import { BatchedWriter } from './batched.js';
import { ApiError } from '../common/errors.js';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { asNumber } from '../db/decode.js';
import { isUnavailable } from '../db/dialect.js';
import { dialectFor } from '../db/dialects/index.js';
import type { Clock } from '../common/clock.js';
import { iso } from '../db/iso.js';
import { readWindow } from '../common/window.js';

export const HOUR_MS = 60 * 60 * 1000;
/** Hourly buckets older than this are removed by housekeeping. */
export const USAGE_RETENTION_MS = 30 * 24 * HOUR_MS;
/** Rows per INSERT: 7 values each, well under every placeholder limit. */
const BATCH = 200;

const COUNTERS = ['requests', 'rate_limited', 'client_errors', 'server_errors'] as const;
type Counter = (typeof COUNTERS)[number];

interface Bucket extends Record<Counter, number> {
  keyId: string;
  workspaceId: string;
  hour: number;
}

/** Which counters an answer adds to: every answer is a request; 429 is rate limited, not a client error. */
export function countersOf(status: number): Counter[] {
  if (status === 429) return ['requests', 'rate_limited'];
  if (status >= 500) return ['requests', 'server_errors'];
  if (status >= 400) return ['requests', 'client_errors'];
  return ['requests'];
}

/**
 * Counts the public API's answers per key and hour in process memory and writes them in
 * batches (one upsert per batch, every `flushMs`), so counting costs a request no round trip.
 * A process killed without warning loses at most the last interval; a stop writes everything.
 * A batch the database cannot take because it is away is kept for the next flush.
 */
export class UsageMeter extends BatchedWriter {
  private pending = new Map<string, Bucket>();

  constructor(
    private readonly db: Knex,
    private readonly clock: Clock,
    private readonly log: Logger,
    flushMs: number,
  ) {
    super(flushMs);
  }

  count(keyId: string, workspaceId: string, status: number): void {
    const hour = Math.floor(this.clock.now() / HOUR_MS) * HOUR_MS;
    const id = `${keyId}|${hour}`;
    let bucket = this.pending.get(id);
    if (!bucket) {
      bucket = { keyId, workspaceId, hour, requests: 0, rate_limited: 0, client_errors: 0, server_errors: 0 };
      this.pending.set(id, bucket);
    }
    for (const counter of countersOf(status)) bucket[counter] += 1;
  }

  protected async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const buckets = [...this.pending.values()];
    this.pending = new Map();
    for (let i = 0; i < buckets.length; i += BATCH) {
      const batch = buckets.slice(i, i + BATCH);
      try {
        await upsert(this.db, batch);
      } catch (err) {
        if (isUnavailable(err)) {
          for (const b of batch) this.merge(b);
          this.log.warn({ err, buckets: batch.length }, 'usage counts not written; kept for the next flush');
        } else {
          this.log.error({ err, buckets: batch.length }, 'usage counts could not be written and were dropped');
        }
      }
    }
  }

  private merge(bucket: Bucket): void {
    const id = `${bucket.keyId}|${bucket.hour}`;
    const current = this.pending.get(id);
    if (!current) this.pending.set(id, bucket);
    else for (const counter of COUNTERS) current[counter] += bucket[counter];
  }
}

/** Adds a batch of counts to their hourly rows: one statement, parameterised, on every backend. */
async function upsert(db: Knex, batch: readonly Bucket[]): Promise<void> {
  const values = batch.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ');
  const bindings = batch.flatMap((b) => [b.keyId, b.workspaceId, b.hour, b.requests, b.rate_limited, b.client_errors, b.server_errors]);
  const insert = `INSERT INTO key_usage (key_id, workspace_id, hour, ${COUNTERS.join(', ')}) VALUES ${values}`;
  await db.raw(dialectFor(db).insertAdding(insert, 'key_usage', ['key_id', 'hour'], COUNTERS), bindings);
}

/**
 * The window a usage query asks for: `since` and `until` (RFC 3339) default to the 7 days up to
 * now; 400 when since is not before until or the window spans more than 31 days.
 */
export function usageWindow(query: { key_id?: string; since?: string; until?: string }, now: number): { keyId?: string; since: number; until: number } {
  const read = readWindow(query, 'query', now) as { since?: number; until: number };
  const until = read.until;
  const since = read.since ?? until - 7 * 24 * HOUR_MS;
  if (until - since > 31 * 24 * HOUR_MS) throw new ApiError('invalid_parameter', 'A usage query spans at most 31 days.', { errors: [{ parameter: 'until', message: 'must be at most 31 days after since' }] });
  return { ...(query.key_id !== undefined ? { keyId: query.key_id } : {}), since, until };
}

/** A workspace's hourly buckets in [since, until), oldest first, of one key or all. */
export async function listUsage(db: Knex, workspaceId: string, query: { keyId?: string; since: number; until: number }) {
  const q = db('key_usage').select('hour', 'key_id', ...COUNTERS).where('workspace_id', workspaceId).where('hour', '>=', Math.floor(query.since / HOUR_MS) * HOUR_MS).where('hour', '<', query.until);
  if (query.keyId !== undefined) q.where('key_id', query.keyId);
  const rows = (await q.orderBy([{ column: 'hour' }, { column: 'key_id' }])) as Array<Record<string, unknown>>;
  return rows.map((r) => ({
    start: iso(r.hour) as string,
    key_id: String(r.key_id),
    requests: asNumber(r.requests),
    rate_limited: asNumber(r.rate_limited),
    client_errors: asNumber(r.client_errors),
    server_errors: asNumber(r.server_errors),
  }));
}

/** Housekeeping: buckets past the 30 days kept. */
export async function sweepUsage(db: Knex, now: number): Promise<number> {
  return db('key_usage').where('hour', '<', now - USAGE_RETENTION_MS).delete();
}
