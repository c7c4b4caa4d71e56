import type { Knex } from 'knex';
import { asNumber } from '../db/decode.js';
import { transaction } from '../db/dialects/index.js';

/** Events per batch: each batch is one short transaction, so a write waits for at most one. */
export const RETENTION_BATCH = 100;

/** Between batches, the database is left to others at least this long, and at least as long as the batch took. */
const PAUSE_MS = 5;

/**
 * Deletes events older than the retention window (RETENTION_DAYS) with their deliveries and
 * attempts, in small batches that never hold a long lock: each batch deletes at most
 * RETENTION_BATCH events (and what hangs off them) in one short transaction, then pauses.
 * Events are found by when they were made (`events_created`, on (created_at, seq)); one not
 * yet fanned out (still in `events_pending`) is never deleted, nor is one with a delivery
 * still pending (a recovery may have given an old delivery new attempts).
 * Returns how many events were deleted, and the longest a batch held its transaction (the
 * longest any concurrent write could have waited for it).
 */
export async function sweepRetention(db: Knex, now: number, retentionMs: number, options: { batch?: number; pauseMs?: number } = {}): Promise<{ removed: number; longestBatchMs: number }> {
  const batch = options.batch ?? RETENTION_BATCH;
  const pauseMs = options.pauseMs ?? PAUSE_MS;
  const cutoff = now - retentionMs;
  let removed = 0;
  let longestBatchMs = 0;
  let after: { at: number; seq: number } | undefined;
  for (;;) {
    const q = db('events').select('seq', 'id', 'created_at').where('created_at', '<', cutoff);
    if (after) q.where((w) => w.where('created_at', '>', after!.at).orWhere((x) => x.where('created_at', after!.at).where('seq', '>', after!.seq)));
    const events = (await q.orderBy([{ column: 'created_at' }, { column: 'seq' }]).limit(batch)) as Array<{ seq: number; id: string; created_at: number | string }>;
    if (events.length === 0) break;
    const last = events[events.length - 1]!;
    after = { at: asNumber(last.created_at), seq: asNumber(last.seq) };
    const started = performance.now();
    removed += await transaction(db, async (trx) => {
      const ids = events.map((e) => e.id);
      const deliveries = (await trx('webhook_deliveries').select('id', 'event_id', 'status').whereIn('event_id', ids)) as Array<{ id: string; event_id: string; status: string }>;
      const waiting = (await trx('events_pending').select('event_id').whereIn('event_id', ids)) as Array<{ event_id: string }>;
      const busy = new Set([...deliveries.filter((d) => d.status === 'pending' || d.status === 'held').map((d) => d.event_id), ...waiting.map((w) => w.event_id)]);
      const gone = events.filter((e) => !busy.has(e.id));
      const goneDeliveries = deliveries.filter((d) => !busy.has(d.event_id)).map((d) => d.id);
      if (goneDeliveries.length > 0) {
        await trx('webhook_attempts').whereIn('delivery_id', goneDeliveries).delete();
        await trx('webhook_deliveries').whereIn('id', goneDeliveries).delete();
      }
      if (gone.length > 0) await trx('events').whereIn('seq', gone.map((e) => e.seq)).delete();
      return gone.length;
    });
    const batchMs = performance.now() - started;
    longestBatchMs = Math.max(longestBatchMs, batchMs);
    if (events.length < batch) break;
    // At most half the time busy: when the database is slow to write, the sweep slows down with it.
    await new Promise((resolve) => setTimeout(resolve, Math.max(pauseMs, batchMs)));
  }
  return { removed, longestBatchMs };
}
