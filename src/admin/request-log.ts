import { randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { ApiError } from '../common/errors.js';
import { asNumber } from '../db/decode.js';
import { isUnavailable, type Dialect } from '../db/dialect.js';
import { dialectFor } from '../db/dialects/index.js';
import { writeTransaction } from '../db/tx.js';
import { iso } from '../db/iso.js';
import { keysetPage } from '../kernel/query/index.js';
import { BatchedWriter } from './batched.js';
import { HOUR_MS } from './usage.js';
import { readWindow } from '../common/window.js';

/** One request made with a key, as the request log keeps it (docs/reference.md section 15). */
export interface RequestEntry {
  keyId: string;
  /** Tells apart the requests of one key in one millisecond (see RequestLog). */
  id: number;
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
/** Paths longer than the column are cut (with an ellipsis): the log is for reading, not replaying. */
const PATH_LENGTH = 1024;

const COLUMNS = ['key_id', 'at', 'id', 'method', 'route', 'path', 'status', 'status_class', 'error_code', 'duration_us', 'request_id', 'ip'] as const;
const ROW = `(${COLUMNS.map(() => '?').join(', ')})`;

/**
 * Keeps each key's requests in process memory and writes them in batches (INSERTs of 100 rows, at
 * most a second after they were answered, sooner in a burst), with the errors also counted per
 * key, hour, status and code for the summary: logging costs a request no round trip. A batch the
 * database cannot take because it is away is kept for the next flush, up to MAX_PENDING entries.
 */
export class RequestLog extends BatchedWriter {
  /**
   * This process's numbers for its entries: a random 20-bit prefix of its own, then a count, so
   * that two processes logging for one key in one millisecond write distinct rows (and a clash,
   * one in a million pairs of processes and then only on the same key, millisecond and count,
   * loses that entry alone: the INSERT skips a row whose key is taken).
   */
  private readonly prefix = randomInt(2 ** 20) * 2 ** 32;
  private count = 0;
  private pending: RequestEntry[] = [];
  private dropped = 0;

  constructor(
    private readonly db: Knex,
    private readonly log: Logger,
    flushMs = REQUEST_LOG_FLUSH_MS,
  ) {
    super(flushMs);
  }

  /** Keeps an entry for the next flush (numbering it). */
  record(entry: Omit<RequestEntry, 'id'>): void {
    if (this.pending.length >= MAX_PENDING) {
      this.dropped += 1;
      return;
    }
    this.count = (this.count + 1) % 2 ** 32;
    (entry as RequestEntry).id = this.prefix + this.count;
    this.pending.push(entry as RequestEntry);
    if (this.pending.length >= EAGER_FLUSH && !this.flushing) void this.flush();
  }

  /** Writes what was waiting when it started (what arrives meanwhile waits for the next flush), in one transaction. */
  protected async write(): Promise<void> {
    if (this.dropped > 0) {
      this.log.warn({ dropped: this.dropped, kept: this.pending.length }, 'request log entries dropped: more were waiting than a process keeps while its database is away');
      this.dropped = 0;
    }
    if (this.pending.length === 0) return;
    const entries = this.pending;
    this.pending = [];
    try {
      await insert(this.db, entries);
    } catch (err) {
      if (isUnavailable(err)) {
        this.pending = [...entries, ...this.pending].slice(0, MAX_PENDING);
        this.log.warn({ err, entries: entries.length }, 'request log not written; kept for the next flush');
        return;
      }
      this.log.error({ err, entries: entries.length }, 'request log entries could not be written and were dropped');
    }
  }
}

/**
 * Rows per INSERT: as many as fit, of these sizes only, so each connection prepares three texts
 * once (a text per batch size would be a statement prepared, and kept, per flush).
 */
const SIZES = [100, 10, 1] as const;

/** `items` cut into runs of the SIZES, largest first. */
function* runs<T>(items: readonly T[]): Generator<T[]> {
  let i = 0;
  for (const size of SIZES) for (; items.length - i >= size; i += size) yield items.slice(i, i + size);
}

const rows = (size: number, row: string) => Array.from({ length: size }, () => row).join(', ');
const statements = (dialect: Dialect) => ({
  inserts: new Map<number, string>(SIZES.map((size) => [size, dialect.driverText(dialect.insertIgnoring(`INSERT INTO key_requests (${COLUMNS.join(', ')}) VALUES ${rows(size, ROW)}`))])),
  upserts: new Map<number, string>(
    SIZES.map((size) => [
      size,
      dialect.driverText(dialect.insertAdding(`INSERT INTO key_request_errors (key_id, hour, status, error_code, requests) VALUES ${rows(size, '(?, ?, ?, ?, ?)')}`, 'key_request_errors', ['key_id', 'hour', 'status', 'error_code'], ['requests'])),
    ]),
  ),
});
/** Each dialect's statements, made once. */
const STATEMENTS = new WeakMap<Dialect, ReturnType<typeof statements>>();
const statementsOf = (dialect: Dialect) => STATEMENTS.get(dialect) ?? STATEMENTS.set(dialect, statements(dialect)).get(dialect)!;

/**
 * The entries, and their errors added to their hourly counts, in one transaction of the driver
 * (db/tx.ts: on SQLite it commits with the writes of the same turn of the event loop).
 */
async function insert(db: Knex, entries: readonly RequestEntry[]): Promise<void> {
  const errors = new Map<string, [keyId: string, hour: number, status: number, code: string, n: number]>();
  for (const e of entries) {
    if (e.status < 400) continue;
    const hour = Math.floor(e.at / HOUR_MS) * HOUR_MS;
    const code = e.errorCode ?? '';
    const id = `${e.keyId}|${hour}|${e.status}|${code}`;
    const counted = errors.get(id);
    if (counted) counted[4] += 1;
    else errors.set(id, [e.keyId, hour, e.status, code, 1]);
  }
  const { inserts, upserts } = statementsOf(dialectFor(db));
  await writeTransaction(db, async (tx) => {
    for (const run of runs(entries)) {
      const values: unknown[] = [];
      for (const e of run) {
        const path = e.path.length > PATH_LENGTH ? `${e.path.slice(0, PATH_LENGTH - 1)}…` : e.path;
        values.push(e.keyId, e.at, e.id, e.method, e.route, path, e.status, Math.floor(e.status / 100), e.errorCode, e.durationUs, e.requestId, e.ip);
      }
      await tx.run(inserts.get(run.length)!, values);
    }
    for (const run of runs([...errors.values()])) await tx.run(upserts.get(run.length)!, run.flat());
  });
}

/** A key of the workspace, or 404: another workspace's key is as unknown as none. */
async function keyOf(db: Knex, workspaceId: string, keyId: string): Promise<void> {
  const key = (await db('api_keys').select('id').where({ id: keyId, workspace_id: workspaceId }).first()) as { id: string } | undefined;
  if (!key) throw new ApiError('not_found', `No key with id ${keyId}.`);
}

/** The status class of successes, which the log's index by class leaves out (see listRequests), and that index (MySQL's holds every class). */
const SUCCESS_CLASS = 2;
const ERRORS_INDEX = 'key_requests_key_errors';

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
  const { since, until } = readWindow(query, 'query');
  await keyOf(db, workspaceId, keyId);
  const exact = query.status !== undefined && /^\d+$/.test(query.status) ? Number(query.status) : undefined;
  const statusClass = query.status === undefined ? undefined : exact === undefined ? Number(query.status[0]) : Math.floor(exact / 100);
  // A key's answers other than successes, which may be few among many, through the index that holds them alone (migrations/20261128000100).
  const others = statusClass !== undefined && statusClass !== SUCCESS_CLASS;
  const q = db
    .from(others ? dialectFor(db).indexedBy(db, 'key_requests', ERRORS_INDEX) : 'key_requests')
    .select('id', 'at', 'method', 'route', 'path', 'status', 'error_code', 'duration_us', 'request_id', 'ip')
    .where('key_id', keyId);
  if (statusClass !== undefined) q.where('status_class', statusClass);
  // The index's condition, written as it is: PostgreSQL then knows the index holds these rows.
  if (others) q.whereRaw(`status_class <> ${SUCCESS_CLASS}`);
  if (exact !== undefined) q.where('status', exact);
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

/** Rows the sweep deletes at most (about) per statement. */
const SWEEP_BATCH = 1000;

/**
 * Housekeeping: the log's entries and hourly error counts past the retention window. The keys
 * are found in the log itself (one seek on its primary key each, so a key that is no more is
 * swept too), and each key's old entries deleted oldest first, about SWEEP_BATCH rows a
 * statement, each a range of the primary key.
 */
export async function sweepRequestLog(db: Knex, now: number, retentionMs: number): Promise<number> {
  const cutoff = now - retentionMs;
  await db('key_request_errors').where('hour', '<', Math.floor(cutoff / HOUR_MS) * HOUR_MS).delete();
  let removed = 0;
  let key = '';
  for (;;) {
    const next = (await db('key_requests').select('key_id').where('key_id', '>', key).orderBy('key_id').first()) as { key_id: string } | undefined;
    if (!next) return removed;
    key = next.key_id;
    for (;;) {
      // The SWEEP_BATCH-th oldest entry past the window: up to it (ties included) in one statement, or all if fewer.
      const edge = (await db('key_requests').select('at').where('key_id', key).where('at', '<', cutoff).orderBy('at').offset(SWEEP_BATCH - 1).first()) as { at: number | string } | undefined;
      removed += await db('key_requests').where('key_id', key).where('at', edge ? '<=' : '<', edge ? asNumber(edge.at) : cutoff).delete();
      if (!edge) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}
