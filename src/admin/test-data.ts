import type { Knex } from 'knex';
import { recordAudit } from '../audit/log.js';
import { testWorkspaceOf } from '../common/modes.js';
import type { Who } from '../common/who.js';
import { transaction } from '../db/dialects/index.js';
import type { Registry } from '../kernel/registry/index.js';
import { type Job, type JobStep, queueJob } from './jobs.js';

/** Rows per batch: each batch is one short transaction. */
export const TEST_DATA_BATCH = 200;
/** Between batches, the database is left to others at least this long, and at least as long as the batch took. */
const PAUSE_MS = 5;

/** What a deletion has done so far. */
export interface TestDataProgress {
  [counted: string]: number;
  objects: number;
  events: number;
}

/**
 * Asks for the workspace's test data to be deleted (docs/reference.md section 21): a job,
 * audited, that a process runs off the request path; asking while one is under way gives it.
 */
export async function requestTestDataDeletion(db: Knex, who: Who, now: number): Promise<{ job: Job; fresh: boolean }> {
  return transaction(db, async (trx) => {
    const queued = await queueJob(trx, who.workspace.id, 'delete_test_data', who.actor, { objects: 0, events: 0 }, now);
    if (queued.fresh) await recordAudit(trx, who, { workspaceId: who.workspace.id, action: 'workspace.test_data_deleted', target: { type: 'job', id: queued.job.id }, details: {} }, now);
    return queued;
  });
}

/** Runs `batch` over and over until it deletes nothing, pausing between batches; each deletion is added to `progress[counted]`. */
async function drain(step: JobStep, progress: TestDataProgress, counted: 'objects' | 'events' | null, batch: () => Promise<number>): Promise<void> {
  for (;;) {
    const started = performance.now();
    const deleted = await batch();
    if (deleted === 0) return;
    if (counted) progress[counted] += deleted;
    await step.progress(progress);
    await new Promise((resolve) => setTimeout(resolve, Math.max(PAUSE_MS, performance.now() - started)));
  }
}

/**
 * Deletes a workspace's test objects (every resource's, with their search terms and the test
 * keys' idempotency records) and its test events (with their deliveries and attempts), in
 * batches of TEST_DATA_BATCH, each in one short transaction. Test keys, test subscriptions, the
 * request log and usage stay. No event is emitted for what it deletes. Objects and events made
 * while it runs may stay; run it again for them.
 */
export function deleteTestData(db: Knex, registry: Registry) {
  return async (step: JobStep, done: Record<string, number>): Promise<void> => {
    const test = testWorkspaceOf(step.job.workspace_id);
    const progress: TestDataProgress = { objects: done.objects ?? 0, events: done.events ?? 0 };
    for (const { def } of registry.resources) {
      await drain(step, progress, 'objects', async () => {
        const ids = (await db(def.table).where('workspace_id', test).limit(TEST_DATA_BATCH).pluck('id')) as string[];
        if (ids.length === 0) return 0;
        return db(def.table).where('workspace_id', test).whereIn('id', ids).delete();
      });
    }
    const TERM_KEY = ['workspace_id', 'resource', 'term', 'created_at', 'object_id'];
    await drain(step, progress, null, async () => {
      const keys = (await db('search_terms').select(TERM_KEY).where('workspace_id', test).limit(TEST_DATA_BATCH)) as Array<Record<string, unknown>>;
      if (keys.length === 0) return 0;
      return db('search_terms').whereIn(TERM_KEY, keys.map((k) => TERM_KEY.map((c) => k[c] as Knex.Value))).delete();
    });
    await drain(step, progress, null, async () => {
      const hashes = (await db('idempotency_keys').where('workspace_id', test).limit(TEST_DATA_BATCH).pluck('key_hash')) as string[];
      return hashes.length === 0 ? 0 : db('idempotency_keys').where('workspace_id', test).whereIn('key_hash', hashes).delete();
    });
    await drain(step, progress, 'events', async () => {
      const events = (await db('events').select('seq', 'id').where('workspace_id', test).orderBy('seq').limit(TEST_DATA_BATCH)) as Array<{ seq: number; id: string }>;
      if (events.length === 0) return 0;
      const ids = events.map((e) => e.id);
      return transaction(db, async (trx) => {
        const deliveries = (await trx('webhook_deliveries').whereIn('event_id', ids).pluck('id')) as string[];
        if (deliveries.length > 0) {
          await trx('webhook_attempts').whereIn('delivery_id', deliveries).delete();
          await trx('webhook_deliveries').whereIn('id', deliveries).delete();
        }
        await trx('events_pending').whereIn('event_id', ids).delete();
        return trx('events').whereIn('seq', events.map((e) => e.seq)).delete();
      });
    });
  };
}
