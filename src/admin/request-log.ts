import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { ApiError } from '../common/errors.js';
import { asNumber } from '../db/decode.js';
import { isMysql, isUnavailable, transaction } from '../db/dialect.js';
import { iso } from '../db/iso.js';
import { keysetPage } from '../kernel/keyset.js';
import { HOUR_MS } from './usage.js';

/** One request made with a key, as the request log keeps it (API.md section 15). */
export interface RequestEntry {
  keyId: string;
  /** Epoch milliseconds when it arrived. */
  at: number;
  method: string;
  /** The route's template as the OpenAPI document writes it, or `unmatched`. */
  route: string;
  path: string;
  status: number;
  /** The `code` of the problem answered, or null for a success (or an error without one). */
  errorCode: string | null;
  durationUs: number;
  requestId: string;
  ip: string;
}

/** How often each server writes what it logged: the most a process killed without warning loses. */
export const REQUEST_LOG_FLUSH_MS = 1000;
/** Past this many entries waiting, a flush starts at once instead of at the next tick. */
const EAGER_FLUSH = 2000;
/** The most entries a process holds while its database is away; past it, new ones are dropped (and counted). */
export const MAX_PENDING = 50_000;
/** Rows per INSERT: 11 values each, well under every placeholder limit. */
const BATCH = 500;
/** Paths longer than the column are cut (with an ellipsis): the log is for reading, not replaying. */
const PATH_LENGTH = 1024;

const COLUMNS = ['key_id', 'at', 'method', 'route', 'path', 'status', 'status_class', 'error_code', 'duration_us', 'request_id', 'ip'] as const;
const ROW = `(${COLUMNS.map(() => '?').join(', ')})`;

/**
 * Keeps each key's requests in process memory and writes them in batches (one INSERT per 500, at
 * most a second after they were answered, sooner in a burst), with the errors also counted per
 * key, hour, status and code for the summary: logging costs a request no round trip. A batch the
 * database cannot take because it is away is kept for the next flush, up to MAX_PENDING entries.
 */
export class RequestLog {
  private pending: RequestEntry[] = [];
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private flushing = false;

  constructor(
    private readonly db: Knex,
    private readonly log: Logger,
    private readonly flushMs = REQUEST_LOG_FLUSH_MS,
  ) {}

  record(entry: RequestEntry): void {
    if (this.pending.length >= MAX_PENDING) {
      this.dropped += 1;
      return;
    }
    this.pending.push(entry);
    if (this.pending.length >= EAGER_FLUSH && !this.flushing) void this.flush();
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  /** Writes what is logged so far; flushes never overlap. */
  flush(): Promise<void> {
    this.flushing = true;
    this.running = this.running.then(() => this.write()).finally(() => (this.flushing = false));
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.dropped > 0) {
      this.log.warn({ dropped: this.dropped, kept: this.pending.length }, 'request log entries dropped: more were waiting than a process keeps while its database is away');
      this.dropped = 0;
    }
    while (this.pending.length > 0) {
      const batch = this.pending.slice(0, BATCH);
      this.pending = this.pending.slice(batch.length);
      try {
        await insert(this.db, batch);
      } catch (err) {
        if (isUnavailable(err)) {
          this.pending = [...batch, ...this.pending].slice(0, MAX_PENDING);
          this.log.warn({ err, entries: batch.length }, 'request log not written; kept for the next flush');
          return;
        }
        this.log.error({ err, entries: batch.length }, 'request log entries could not be written and were dropped');
      }
    }
  }
}

/** A batch of entries in one INSERT, and its errors added to their hourly counts in one upsert: one transaction. */
async function insert(db: Knex, batch: readonly RequestEntry[]): Promise<void> {
  const rows = batch.map(() => ROW).join(', ');
  const bindings: Knex.Value[] = [];
  const errors = new Map<string, { keyId: string; hour: number; status: number; code: string; n: number }>();
  for (const e of batch) {
    const path = e.path.length > PATH_LENGTH ? `${e.path.slice(0, PATH_LENGTH - 1)}…` : e.path;
    bindings.push(e.keyId, e.at, e.method, e.route, path, e.status, Math.floor(e.status / 100), e.errorCode, e.durationUs, e.requestId, e.ip);
    if (e.status < 400) continue;
    const hour = Math.floor(e.at / HOUR_MS) * HOUR_MS;
    const code = e.errorCode ?? '';
    const id = `${e.keyId}|${hour}|${e.status}|${code}`;
    const counted = errors.get(id);
    if (counted) counted.n += 1;
    else errors.set(id, { keyId: e.keyId, hour, status: e.status, code, n: 1 });
  }
  await transaction(db, async (trx) => {
    await trx.raw(`INSERT INTO key_requests (${COLUMNS.join(', ')}) VALUES ${rows}`, bindings);
    if (errors.size === 0) return;
    const counts = [...errors.values()];
    const update = isMysql(db) ? 'ON DUPLICATE KEY UPDATE requests = requests + VALUES(requests)' : 'ON CONFLICT (key_id, hour, status, error_code) DO UPDATE SET requests = requests + excluded.requests';
    await trx.raw(
      `INSERT INTO key_request_errors (key_id, hour, status, error_code, requests) VALUES ${counts.map(() => '(?, ?, ?, ?, ?)').join(', ')} ${update}`,
      counts.flatMap((c) => [c.keyId, c.hour, c.status, c.code, c.n]),
    );
  });
}

/** A key of the workspace, or 404: another workspace's key is as unknown as none. */
async function keyOf(db: Knex, workspaceId: string, keyId: string): Promise<void> {
  const key = (await db('api_keys').select('id').where({ id: keyId, workspace_id: workspaceId }).first()) as { id: string } | undefined;
  if (!key) throw new ApiError('not_found', `No key with id ${keyId}.`);
}

/** `status`: a class (`2xx`, `4xx`, `5xx`) or one status code. */
export const STATUS_FILTER = /^(?:[2-5]xx|[1-5][0-9]{2})$/;

function view(row: Record<string, unknown>) {
  return {
    at: iso(row.at) as string,
    method: String(row.method),
    route: String(row.route),
    path: String(row.path),
    status: asNumber(row.status),
    error_code: row.error_code === null ? null : String(row.error_code),
    duration_ms: asNumber(row.duration_us) / 1000,
    request_id: String(row.request_id),
    ip: String(row.ip),
  };
}

/**
 * A page of a key's requests, newest first, by keyset over (at, id): every request exactly once
 * however the log grows meanwhile. `status` is a class or a code; `since` is included, `until`
 * excluded.
 */
export async function listRequests(db: Knex, workspaceId: string, keyId: string, query: { limit: number; cursor?: string; status?: string; since?: string; until?: string }) {
  const since = query.since === undefined ? undefined : Date.parse(query.since);
  const until = query.until === undefined ? undefined : Date.parse(query.until);
  if (since !== undefined && until !== undefined && !(since < until)) {
    throw new ApiError('invalid_parameter', 'since must be before until.', { errors: [{ parameter: 'since', message: 'must be before until' }] });
  }
  await keyOf(db, workspaceId, keyId);
  const q = db('key_requests').select('id', 'at', 'method', 'route', 'path', 'status', 'error_code', 'duration_us', 'request_id', 'ip').where('key_id', keyId);
  if (query.status !== undefined) {
    const exact = /^\d+$/.test(query.status) ? Number(query.status) : undefined;
    q.where('status_class', exact === undefined ? Number(query.status[0]) : Math.floor(exact / 100));
    if (exact !== undefined) q.where('status', exact);
  }
  if (since !== undefined) q.where('at', '>=', since);
  if (until !== undefined) q.where('at', '<', until);
  return keysetPage(q, query, { resource: 'key_requests', sort: '-at' }, view);
}

/** The hours an errors summary counts: the `hours` UTC hours up to and including the current one. */
const fromHour = (now: number, hours: number) => Math.floor(now / HOUR_MS) * HOUR_MS - (hours - 1) * HOUR_MS;

/**
 * A key's errors (answers with status 400 and up) counted by status and error code over the last
 * 24 hours and the last 7 days (whole UTC hours, the current one included), most frequent first.
 */
export async function requestSummary(db: Knex, workspaceId: string, keyId: string, now: number) {
  await keyOf(db, workspaceId, keyId);
  const day = fromHour(now, 24);
  const rows = (await db('key_request_errors')
    .select('status', 'error_code')
    .sum({ week: 'requests' })
    .select(db.raw('SUM(CASE WHEN hour >= ? THEN requests ELSE 0 END) AS day', [day]))
    .where('key_id', keyId)
    .where('hour', '>=', fromHour(now, 24 * 7))
    .groupBy('status', 'error_code')) as Array<{ status: number; error_code: string; week: unknown; day: unknown }>;
  const window = (pick: (r: (typeof rows)[number]) => number, hours: number) => {
    const by = rows
      .map((r) => ({ status: asNumber(r.status), error_code: r.error_code === '' ? null : r.error_code, count: pick(r) }))
      .filter((r) => r.count > 0)
      .sort((a, b) => b.count - a.count || a.status - b.status || String(a.error_code).localeCompare(String(b.error_code)));
    return { since: new Date(fromHour(now, hours)).toISOString(), errors: by.reduce((n, r) => n + r.count, 0), by };
  };
  return { last_24_hours: window((r) => asNumber(r.day), 24), last_7_days: window((r) => asNumber(r.week), 24 * 7) };
}

/** Rows per batch of the sweep (each batch one short statement), and keys asked about at once. */
const SWEEP_BATCH = 1000;
const SWEEP_KEYS = 200;

/**
 * Housekeeping: the log's entries and hourly error counts past the retention window. Entries are
 * found key by key on the (key_id, at) index, a few hundred keys at a time, and deleted in
 * batches of SWEEP_BATCH rows, each one short statement.
 */
export async function sweepRequestLog(db: Knex, now: number, retentionMs: number): Promise<number> {
  const cutoff = now - retentionMs;
  await db('key_request_errors').where('hour', '<', Math.floor(cutoff / HOUR_MS) * HOUR_MS).delete();
  let removed = 0;
  let afterKey = '';
  for (;;) {
    const keys = ((await db('api_keys').select('id').where('id', '>', afterKey).orderBy('id').limit(SWEEP_KEYS)) as Array<{ id: string }>).map((k) => k.id);
    if (keys.length === 0) return removed;
    afterKey = keys[keys.length - 1]!;
    for (;;) {
      const old = ((await db('key_requests').select('id').whereIn('key_id', keys).where('at', '<', cutoff).limit(SWEEP_BATCH)) as Array<{ id: number | string }>).map((r) => r.id);
      if (old.length > 0) removed += await db('key_requests').whereIn('id', old).delete();
      if (old.length < SWEEP_BATCH) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}
