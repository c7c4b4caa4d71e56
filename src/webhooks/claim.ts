import type { Knex } from 'knex';
import { asBoolean, asNullableNumber, asNumber } from '../db/decode.js';
import { claimRows, transaction } from '../db/dialects/index.js';
import type { DeliveryRow } from './deliveries.js';
import type { Payload } from './payloads.js';

/** A claimed delivery with what sending it needs. */
export interface Job {
  delivery: DeliveryRow;
  payload: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | string | null;
  enabled: boolean;
  deleted: boolean;
  /** The subscription's max_deliveries_per_second; null when it has none. */
  maxPerSecond: number | null;
  /** What the subscription's deliveries carry (webhooks/payloads.ts). */
  payloadKind: Payload;
  /** The destination URL's password, sealed; null when it has none. */
  urlPassword: string | null;
  /** The API version the subscription's deliveries are rendered in. */
  apiVersion: string;
  /** The traceparent stored with the event (tracing/tracer.ts): its attempts are spans of that trace. Null when it has none. */
  traceparent: string | null;
}

/**
 * Claims up to `limit` due deliveries for `lease` ms: their due time moves to the lease's end,
 * so if this worker dies they come due again then and another worker takes them.
 */
export async function claimDue(db: Knex, leaseOwner: string, now: number, leaseMs: number, limit: number): Promise<Job[]> {
  const ids = await transaction(db, (trx) =>
    claimRows(trx, {
      table: 'webhook_deliveries',
      key: 'id',
      claimable: (q) => q.where('status', 'pending').where('next_attempt_at', '<=', now),
      order: 'next_attempt_at',
      limit,
      set: { lease_owner: leaseOwner, next_attempt_at: now + leaseMs },
    }),
  );
  return jobsOf(db, ids, leaseOwner);
}

/** The jobs of deliveries `leaseOwner` holds, among `ids`: what sending each needs. */
export async function jobsOf(db: Knex | Knex.Transaction, ids: readonly string[], leaseOwner: string): Promise<Job[]> {
  if (ids.length === 0) return [];
  const rows = (await db('webhook_deliveries as d')
    .join('events as e', 'e.id', 'd.event_id')
    .join('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .select('d.*', 'e.payload', 'e.traceparent as event_traceparent', 's.url', 's.secret', 's.previous_secret', 's.previous_secret_until', 's.enabled as sub_enabled', 's.deleted_at as sub_deleted_at', 's.max_deliveries_per_second as sub_max_per_second', 's.payload as sub_payload', 's.url_password as sub_url_password', 's.api_version as sub_api_version')
    .whereIn('d.id', [...ids])
    .where('d.lease_owner', leaseOwner)) as Array<DeliveryRow & { payload: string; url: string; secret: string; previous_secret: string | null; previous_secret_until: number | null; sub_enabled: boolean | number; sub_deleted_at: number | null; sub_max_per_second: number | null; sub_payload: string; sub_url_password: string | null; sub_api_version: string; event_traceparent: string | null }>;
  return rows.map(({ payload, url, secret, previous_secret, previous_secret_until, sub_enabled, sub_deleted_at, sub_max_per_second, sub_payload, sub_url_password, sub_api_version, event_traceparent, ...delivery }) => ({
    delivery: delivery as DeliveryRow,
    payload,
    url,
    secret,
    previous_secret,
    previous_secret_until,
    enabled: asBoolean(sub_enabled) === true,
    deleted: sub_deleted_at !== null,
    maxPerSecond: asNullableNumber(sub_max_per_second),
    payloadKind: sub_payload === 'thin' ? 'thin' : 'full',
    apiVersion: sub_api_version,
    urlPassword: sub_url_password,
    traceparent: event_traceparent,
  }));
}

/**
 * Hands claimed deliveries back unsent, each due at its own time (a throttled subscription's
 * next tokens): no attempt is counted, and other workers may take them then.
 */
export async function deferClaimed(db: Knex, deferred: Array<{ id: string; leaseOwner: string; at: number }>): Promise<void> {
  if (deferred.length === 0) return;
  await transaction(db, async (trx) => {
    for (const d of deferred) await trx('webhook_deliveries').update({ next_attempt_at: d.at, lease_owner: null }).where({ id: d.id, lease_owner: d.leaseOwner });
  });
}

/** When the next pending delivery comes due (ms since the epoch), if any is pending. */
export async function nextDue(db: Knex): Promise<number | undefined> {
  const row = (await db('webhook_deliveries').where('status', 'pending').min({ at: 'next_attempt_at' }).first()) as { at: number | string | null } | undefined;
  return row?.at == null ? undefined : asNumber(row.at);
}
