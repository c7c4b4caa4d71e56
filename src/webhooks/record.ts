import type { Knex } from 'knex';
import { recordAudit, SYSTEM } from '../audit/log.js';
import { asNumber } from '../db/decode.js';
import { transaction } from '../db/dialects/index.js';
import type { Job } from './claim.js';
import { retryDelayMs } from './schedule.js';
import type { Outcome } from './send.js';
import { emitAbout, reportFailing } from './operational.js';
import { type HandOff, type Line, releaseLines } from './ordering.js';

/** Five days in which every attempt failed disable a subscription (docs/reference.md section 8). */
export const FAILING_DISABLES_AFTER_MS = 5 * 24 * 60 * 60 * 1000;

export interface Finished {
  job: Job;
  outcome: Outcome;
}

/** A failed attempt as recorded: what the worker logs of it. */
export interface FailedAttempt {
  delivery: string;
  subscription: string;
  event_type: string;
  attempt: number;
  status: number | null;
  error: string | null;
  /** When the next attempt is due; null when the delivery failed for good. */
  next_attempt_at: string | null;
}

/** What recording found: the failed attempts, and the deliveries handed to the worker (the next of the lines its deliveries finished), ready to send. */
export interface Recorded {
  failed: FailedAttempt[];
  handed: Job[];
}

/**
 * Records finished attempts, several in one transaction: the attempt rows, each delivery's new
 * state (succeeded; pending again after the retry delay or the receiver's Retry-After; failed
 * when retries are exhausted or on 410) and each subscription's failure streak. A delivery whose
 * lease this worker lost (another worker took it over) is left to that worker.
 *
 * Rows are locked in one order, deliveries then subscriptions, each by ascending id (the
 * batch's deliveries, then the held ones it releases, which no other batch holds: a line's
 * delivery is recorded once). Fan-out takes its (shared, foreign-key) locks on subscriptions in
 * the same order, and releases what it added to lines only after it commits, so neither it nor
 * another worker recording its own batch can close a cycle with this transaction.
 */
export async function recordOutcomes(db: Knex, finished: readonly Finished[], delays: readonly number[], now: number, handOff?: HandOff): Promise<Recorded> {
  if (finished.length === 0) return { failed: [], handed: [] };
  try {
    return await transaction(db, (trx) => record(trx, finished, delays, now, handOff, false));
  } catch (error) {
    if (!(error instanceof NotAllHeld)) throw error;
    return transaction(db, (trx) => record(trx, finished, delays, now, handOff, true));
  }
}

/** A record that assumed each of its deliveries still leased to its worker found one that is not: it is made again, looking first. */
class NotAllHeld extends Error {}

/**
 * One record's transaction. Nearly always each delivery is still there and leased to the worker
 * that attempted it, and the UPDATEs of their new states say so by their counts: `careful`,
 * after one did not, reads first which are there and whose they are.
 */
async function record(trx: Knex.Transaction, finished: readonly Finished[], delays: readonly number[], now: number, handOff: HandOff | undefined, careful: boolean): Promise<Recorded> {
  const byId = (a: Finished, b: Finished) => compare(a.job.delivery.id, b.job.delivery.id);
  let kept = [...finished].sort(byId);
  let mine = kept;
  if (careful) {
    // A subscription deleted meanwhile took its deliveries with it: nothing to record for those.
    // A delivery leased to someone else now is theirs to record.
    const rows = (await trx('webhook_deliveries').whereIn('id', finished.map((f) => f.job.delivery.id)).select('id', 'lease_owner')) as Array<{ id: string; lease_owner: string | null }>;
    const owners = new Map(rows.map((r) => [r.id, r.lease_owner]));
    kept = kept.filter((f) => owners.has(f.job.delivery.id));
    if (kept.length === 0) return { failed: [], handed: [] };
    mine = kept.filter((f) => owners.get(f.job.delivery.id) === f.job.delivery.lease_owner);
  }
  // Deliveries first (a claim takes them by ascending id too), the same new state in one
  // statement (typically every success of the batch); the attempts' foreign key then only
  // reads rows this transaction already holds.
  const updates = new Map(mine.map((f) => [f, deliveryUpdate(f, delays, now)]));
  let updated = 0;
  for (const { update, lease, ids } of groupUpdates(updates)) {
    updated += await trx('webhook_deliveries').update(update).whereIn('id', ids).where('lease_owner', lease);
  }
  if (!careful && updated !== mine.length) throw new NotAllHeld();
  // A per_object line moves on when its delivery is done (succeeded, or given up): its next, to this worker.
  // What sending them needs is read here rather than in a round of its own after the commit.
  const handed = await releaseLines(trx, linesDone(mine, updates), now, handOff);
  await trx('webhook_attempts').insert(
    kept.map(({ job, outcome }) => ({
      delivery_id: job.delivery.id,
      attempt: asNumber(job.delivery.attempts) + 1,
      started_at: outcome.startedAt,
      duration_ms: outcome.durationMs,
      response_status: outcome.status,
      response_excerpt: outcome.excerpt,
      error: outcome.error,
    })),
  );
  // Per subscription in ascending id order; within one, in the order the attempts finished,
  // a run of outcomes of one kind counting once (the first of the run).
  const streaks = new Map<string, Outcome[]>();
  const recorded = new Set(mine);
  for (const f of finished) {
    if (!recorded.has(f)) continue;
    const list = streaks.get(f.job.delivery.subscription_id) ?? [];
    const last = list[list.length - 1];
    if (!last || kindOf(last) !== kindOf(f.outcome)) list.push(f.outcome);
    streaks.set(f.job.delivery.subscription_id, list);
  }
  for (const id of [...streaks.keys()].sort(compare)) {
    const outcomes = streaks.get(id) ?? [];
    for (const outcome of outcomes) await recordStreak(trx, id, outcome, now);
    if (outcomes.some((o) => !succeeded(o))) await reportFailing(trx, id, now);
  }
  const failed = mine
    .filter((f) => !succeeded(f.outcome))
    .map((f) => {
      const next = updates.get(f)?.next_attempt_at as number | null;
      return {
        delivery: f.job.delivery.id,
        subscription: f.job.delivery.subscription_id,
        event_type: f.job.delivery.event_type,
        attempt: asNumber(f.job.delivery.attempts) + 1,
        status: f.outcome.status,
        error: f.outcome.error,
        next_attempt_at: next === null ? null : new Date(next).toISOString(),
      };
    });
  return { failed, handed };
}

/** The lines of per_object deliveries that are finished now (webhooks/ordering.ts). */
function linesDone(finished: readonly Finished[], updates: ReadonlyMap<Finished, Record<string, unknown>>): Line[] {
  const lines: Line[] = [];
  for (const f of finished) {
    const { object_id: objectId, subscription_id: subscriptionId } = f.job.delivery;
    if (objectId != null && updates.get(f)?.status !== 'pending') lines.push({ subscription_id: subscriptionId, object_id: objectId });
  }
  return lines;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const succeeded = (outcome: Outcome) => outcome.acknowledged === true || (outcome.status !== null && outcome.status >= 200 && outcome.status < 300);

const kindOf = (outcome: Outcome) => (succeeded(outcome) ? 'ok' : outcome.status === 410 ? 'gone' : 'failed');

/** A delivery's new state after an attempt. */
function deliveryUpdate({ job, outcome }: Finished, delays: readonly number[], now: number): Record<string, unknown> {
  const d = job.delivery;
  const attempts = asNumber(d.attempts) + 1;
  const common = { attempts, last_response_status: outcome.status, last_error: outcome.error, lease_owner: null, updated_at: now };
  // Done: out of its line (line_seq), if it was in one (webhooks/ordering.ts).
  if (succeeded(outcome)) return { ...common, status: 'succeeded', next_attempt_at: null, delivered_at: now, line_seq: null };
  if (outcome.status === 410 || asNumber(d.retries_left) <= 0) return { ...common, status: 'failed', next_attempt_at: null, line_seq: null };
  return { ...common, status: 'pending', retries_left: asNumber(d.retries_left) - 1, next_attempt_at: now + (outcome.retryAfterMs ?? retryDelayMs(delays, attempts)) };
}

/** The new states grouped: deliveries of one lease with the very same new state are one UPDATE. */
function groupUpdates(updates: ReadonlyMap<Finished, Record<string, unknown>>): Array<{ update: Record<string, unknown>; lease: string | null; ids: string[] }> {
  const groups = new Map<string, { update: Record<string, unknown>; lease: string | null; ids: string[] }>();
  for (const [f, update] of updates) {
    const key = JSON.stringify([update, f.job.delivery.lease_owner]);
    const group = groups.get(key) ?? { update, lease: f.job.delivery.lease_owner, ids: [] };
    group.ids.push(f.job.delivery.id);
    groups.set(key, group);
  }
  return [...groups.values()];
}

/** The subscription's failure streak: cleared by a success, started by a failure; 410 or five failing days turn it off. */
async function recordStreak(trx: Knex.Transaction, subscriptionId: string, outcome: Outcome, now: number): Promise<void> {
  const subscriptions = trx('webhook_subscriptions').where({ id: subscriptionId });
  if (succeeded(outcome)) {
    await subscriptions.clone().whereNotNull('failing_since').update({ failing_since: null });
    return;
  }
  let disabled: number;
  let reason: 'gone' | 'failing';
  if (outcome.status === 410) {
    reason = 'gone';
    disabled = await subscriptions.clone().where({ enabled: true }).update({ enabled: false, disabled_reason: reason, updated_at: now });
  } else {
    reason = 'failing';
    await subscriptions.clone().whereNull('failing_since').update({ failing_since: outcome.startedAt });
    disabled = await subscriptions.clone().where({ enabled: true }).where('failing_since', '<=', now - FAILING_DISABLES_AFTER_MS).update({ enabled: false, disabled_reason: reason, updated_at: now });
  }
  if (disabled > 0) {
    const { workspace_id: workspaceId } = (await subscriptions.clone().first('workspace_id')) as { workspace_id: string };
    const why = reason === 'gone' ? 'the receiver answered 410 Gone' : 'every attempt failed for five days';
    await recordAudit(trx, SYSTEM, { workspaceId, action: 'webhook.disabled', target: { type: 'webhook', id: subscriptionId }, details: { reason, why } }, now);
    await emitAbout(trx, 'webhook.disabled', subscriptionId, now);
  }
}

/** A delivery whose subscription was turned off (or deleted) before it was sent fails at once. */
export async function failUnsendable(db: Knex, jobs: readonly Job[], now: number): Promise<void> {
  for (const job of jobs) {
    await db('webhook_deliveries')
      .update({ status: 'failed', next_attempt_at: null, line_seq: null, lease_owner: null, last_error: job.deleted ? 'subscription deleted' : 'subscription disabled', updated_at: now })
      .where({ id: job.delivery.id, lease_owner: job.delivery.lease_owner });
  }
  const lines = jobs.flatMap(({ delivery: d }) => (d.object_id != null ? [{ subscription_id: d.subscription_id, object_id: d.object_id }] : []));
  if (lines.length > 0) await releaseLines(db, lines, now);
}
