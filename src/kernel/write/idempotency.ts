import { createHash } from 'node:crypto';
import { asNumber } from '../../db/decode.js';
import type { Knex } from 'knex';
import { isDuplicateKey } from '../../db/dialect.js';
import type { Reads } from '../../db/reads.js';
import type { Tx } from '../../db/tx.js';
import { ApiError } from '../../common/errors.js';
import { args, named, param, preparedOnce } from '../../db/prepared.js';
import type { Row } from '../model/index.js';

/** How long the first answer to a POST is remembered (docs/reference.md section 6). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** What a key may be: 1 to 255 visible ASCII characters (a UUID is a good choice). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** What a POST answered, kept so that a retry with the same key gets it again. */
export interface Answer {
  status: number;
  location: string | null;
  body: string;
  /** The API version its body is written in; null where versions do not apply (or for an answer remembered before them). */
  version: string | null;
}

/**
 * How an answer's objects are written for the caller: in its API version. What is stored for
 * a replay, so that a replay answers exactly what was first sent, in the version it was sent in.
 */
export interface Rendering {
  readonly version: string | null;
  object(object: Row): unknown;
}
export const AS_STORED: Rendering = { version: null, object: (object) => object };

export interface IdempotentRequest {
  keyHash: string;
  requestHash: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The request's Idempotency-Key (1-255 visible ASCII characters), if it sent one, tied to its
 * method, path and body.
 */
export function idempotentRequest(key: string, method: string, path: string, body: unknown): IdempotentRequest | undefined {
  if (key === '') return undefined;
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new ApiError('invalid_parameter', `${IDEMPOTENCY_HEADER} must be 1 to 255 visible ASCII characters.`, {
      errors: [{ parameter: IDEMPOTENCY_HEADER, message: 'must be 1 to 255 visible ASCII characters (a UUID is a good choice)' }],
    });
  }
  return { keyHash: sha256(key), requestHash: sha256(`${method} ${path}\n${canonical(body)}`) };
}

/** Where the remembered answers are: their statements are compiled for `db` and read on `reads` (db/reads.ts). */
export type IdempotencyDeps = { db: Knex; reads: Reads };

export type Lookup = { found: 'none' } | { found: 'expired' } | { found: 'answer'; answer: Answer };

/**
 * The answer remembered for this key: replayed for the same request, 409 for another one.
 * A key whose 24 hours are over is free again.
 */
async function lookUp(deps: IdempotencyDeps, workspaceId: string, request: IdempotentRequest, now: number): Promise<Lookup> {
  const { db, reads } = deps;
  const read = preparedOnce(db, 'select:idempotency_keys', () =>
    db('idempotency_keys').select('request_hash', 'status', 'location', 'body', 'api_version', 'created_at').where('workspace_id', param('workspace_id')).andWhere('key_hash', param('key_hash')),
  );
  const [row] = (await reads.all(read.sql, args(read, { workspace_id: workspaceId, key_hash: request.keyHash }))) as Array<{ request_hash: string; status: number; location: string | null; body: string; api_version: string | null; created_at: number | string }>;
  if (!row) return { found: 'none' };
  if (asNumber(row.created_at) <= now - IDEMPOTENCY_TTL_MS) return { found: 'expired' };
  if (row.request_hash !== request.requestHash) {
    throw new ApiError('idempotency_conflict', `This ${IDEMPOTENCY_HEADER} was used in the last 24 hours with another request; use a new key for a new request.`);
  }
  return { found: 'answer', answer: { status: asNumber(row.status), location: row.location, body: row.body, version: row.api_version } };
}

/**
 * Claims the key inside the write's transaction, with the answer the write will give. A second
 * request with the same key waits on this row (MySQL) or the single writer (SQLite), then fails
 * with a duplicate key and replays what this one committed.
 */
export async function remember(db: Knex, tx: Tx, workspaceId: string, request: IdempotentRequest, answer: Answer, now: number, expired: boolean): Promise<void> {
  const row = {
    workspace_id: workspaceId,
    key_hash: request.keyHash,
    request_hash: request.requestHash,
    status: answer.status,
    location: answer.location,
    body: answer.body,
    api_version: answer.version,
    created_at: now,
  };
  if (expired) {
    const sweep = preparedOnce(db, 'delete:idempotency_keys:expired', () =>
      db('idempotency_keys').where('workspace_id', param('workspace_id')).andWhere('key_hash', param('key_hash')).andWhere('created_at', '<=', param('expired_at')).delete(),
    );
    await tx.run(sweep.sql, args(sweep, { ...row, expired_at: now - IDEMPOTENCY_TTL_MS }));
  }
  const insert = preparedOnce(db, 'insert:idempotency_keys', () => db('idempotency_keys').insert(named(Object.keys(row))));
  await tx.run(insert.sql, args(insert, row));
}

/** Removes keys whose 24 hours are over; returns how many. Safe to run from any number of processes. */
export async function sweepExpiredKeys(db: Knex, now: number): Promise<number> {
  return db('idempotency_keys').where('created_at', '<=', now - IDEMPOTENCY_TTL_MS).delete();
}

/**
 * Runs a write that answers once per Idempotency-Key: an answer remembered for the key is
 * replayed; `write` (told whether an expired record must make way, for remember()) runs
 * otherwise, and when a concurrent request with the same key commits first, its answer is
 * replayed instead of the duplicate-key error. Without a key, `write` just runs.
 */
export async function idempotently(deps: IdempotencyDeps, workspaceId: string, request: IdempotentRequest | undefined, now: number, write: (expired: boolean) => Promise<Answer>): Promise<{ answer: Answer; replayed: boolean }> {
  if (!request) return { answer: await write(false), replayed: false };
  const earlier = await lookUp(deps, workspaceId, request, now);
  if (earlier.found === 'answer') return { answer: earlier.answer, replayed: true };
  try {
    return { answer: await write(earlier.found === 'expired'), replayed: false };
  } catch (error) {
    if (isDuplicateKey(error)) {
      const winner = await lookUp(deps, workspaceId, request, now);
      if (winner.found === 'answer') return { answer: winner.answer, replayed: true };
    }
    throw error;
  }
}
