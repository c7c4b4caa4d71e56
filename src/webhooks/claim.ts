import type { Knex } from 'knex';
import { asBoolean, asNumber } from '../db/decode.js';
import { claimRows, transaction } from '../db/dialect.js';
import type { DeliveryRow } from './deliveries.js';

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
  if (ids.length === 0) return [];
  const rows = (await db('webhook_deliveries as d')
    .join('events as e', 'e.id', 'd.event_id')
    .join('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .select('d.*', 'e.payload', 's.url', 's.secret', 's.previous_secret', 's.previous_secret_until', 's.enabled as sub_enabled', 's.deleted_at as sub_deleted_at')
    .whereIn('d.id', ids)
    .where('d.lease_owner', leaseOwner)) as Array<DeliveryRow & { payload: string; url: string; secret: string; previous_secret: string | null; previous_secret_until: number | null; sub_enabled: boolean | number; sub_deleted_at: number | null }>;
  return rows.map(({ payload, url, secret, previous_secret, previous_secret_until, sub_enabled, sub_deleted_at, ...delivery }) => ({
    delivery: delivery as DeliveryRow,
    payload,
    url,
    secret,
    previous_secret,
    previous_secret_until,
    enabled: asBoolean(sub_enabled) === true,
    deleted: sub_deleted_at !== null,
  }));
}

/** When the next pending delivery comes due (ms since the epoch), if any is pending. */
export async function nextDue(db: Knex): Promise<number | undefined> {
  const row = (await db('webhook_deliveries').where('status', 'pending').min({ at: 'next_attempt_at' }).first()) as { at: number | string | null } | undefined;
  return row?.at == null ? undefined : asNumber(row.at);
}
