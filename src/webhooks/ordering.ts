import type { Knex } from 'knex';
import { dialectFor } from '../db/dialects/index.js';
import { jobsOf, type Job } from './claim.js';

/**
 * Ordered delivery (docs/reference.md section 20). A `per_object` subscription's deliveries about
 * one object form a line, in the order of the object's events (`event_seq`: an event's `seq`,
 * which for one object follows its versions, each write holding the object's row until it
 * commits). Only a line's first unfinished delivery is `pending`; those behind it are `held`
 * until it succeeds or is given up, so claims (which take `pending` only) keep the order with
 * any number of workers, and a worker that dies leaves its lease to run out as before.
 *
 * A held delivery is released (made pending: due now, or leased to the worker that finished the
 * one before it, HandOff) when it is its line's head (the least `line_seq`: a delivery has one
 * while it is not done) and no earlier event of the object still waits for the fan-out. That is
 * checked where a line moves (a fan-out adding to it, an attempt finishing it, a recovery) and,
 * for a release a race left behind, by a sweep each worker round.
 */
export const ORDERINGS = ['none', 'per_object'] as const;
export type Ordering = (typeof ORDERINGS)[number];

/** A line: one subscription's deliveries about one object. */
export interface Line {
  subscription_id: string;
  object_id: string;
}

/** How many held deliveries a sweep looks at in one round, and how many lines one statement reads. */
const SWEEP_BATCH = 200;
const LINES_A_STATEMENT = 100;

/** The first unfinished delivery of a line: what the rest of it waits behind. */
interface Head {
  id: string;
  status: string;
  subscription_id: string;
  object_id: string;
  line_seq: number | string;
}

const key = (line: Line) => `${line.subscription_id}\u0000${line.object_id}`;

/**
 * Each line's head, in one statement: per line, its least `line_seq` (set while a delivery is not
 * done), one probe of webhook_deliveries_line however long the object's history. (A GROUP BY over
 * an OR of the lines let SQLite read every delivery of the subscription for each line, and
 * MariaDB plan no range at all.)
 */
async function headsOf(db: Knex | Knex.Transaction, lines: readonly Line[]): Promise<Head[]> {
  if (lines.length === 0) return [];
  return (await dialectFor(db).firstOfGroups(db, {
    table: 'webhook_deliveries',
    by: ['subscription_id', 'object_id'],
    groups: lines.map((line) => [line.subscription_id, line.object_id]),
    order: 'line_seq',
    columns: ['id', 'status', 'subscription_id', 'object_id', 'line_seq'],
  })) as unknown as Head[];
}

/**
 * Makes pending with `set` those of the held deliveries `ids` whose object has no earlier event
 * still waiting for the fan-out (it would join the line before them): one UPDATE, each checked
 * by a probe of events_pending_object.
 */
async function releaseFree(db: Knex | Knex.Transaction, ids: readonly string[], set: Record<string, unknown>): Promise<void> {
  if (ids.length === 0) return;
  await db('webhook_deliveries')
    .update(set)
    .whereIn('id', ids)
    // Still held (a sweep may have released it meanwhile), checked on the rows the ids find: as
    // `status = 'held'`, PostgreSQL ANDed the primary key's bitmap with one of every held delivery
    // from the status index (2,000 in a backlog, 1.5 ms a release).
    .whereRaw('CASE WHEN ?? = ? THEN 1 ELSE 0 END = 1', ['status', 'held'])
    .whereNotExists((waiting) => {
      void waiting.select(db.raw('1')).from('events_pending as p').join('events as e', 'e.id', 'p.event_id').whereRaw('?? = ??', ['p.object_id', 'webhook_deliveries.object_id']).whereRaw('?? < ??', ['e.seq', 'webhook_deliveries.line_seq']);
    });
}

/**
 * A worker that finished a line's delivery takes the next one on at once (up to `limit`), leased
 * to `owner` as a claim would lease it: a line then moves on without waiting for a claim round.
 */
export interface HandOff {
  owner: string;
  leaseMs: number;
  limit: number;
}

/**
 * Releases the next delivery of each line given, where nothing before it is unfinished: due
 * now, or with `handOff` leased to that worker (up to its limit). Answers the deliveries handed
 * off, ready to send.
 */
export async function releaseLines(db: Knex | Knex.Transaction, lines: readonly Line[], now: number, handOff?: HandOff): Promise<Job[]> {
  const all = [...new Map(lines.map((l) => [key(l), l])).values()];
  const handed: Job[] = [];
  for (let i = 0; i < all.length; i += LINES_A_STATEMENT) {
    const held = (await headsOf(db, all.slice(i, i + LINES_A_STATEMENT))).filter((h) => h.status === 'held').map((h) => h.id);
    // Offered to the worker: those released are the ones leased to it now (a head the fan-out still holds stays held, unleased).
    const offered = handOff ? held.splice(0, Math.max(0, handOff.limit - handed.length)) : [];
    if (handOff && offered.length > 0) {
      await releaseFree(db, offered, { status: 'pending', updated_at: now, next_attempt_at: now + handOff.leaseMs, lease_owner: handOff.owner });
      handed.push(...(await jobsOf(db, offered, handOff.owner)));
    }
    await releaseFree(db, held, { status: 'pending', updated_at: now, next_attempt_at: now });
  }
  return handed;
}

/**
 * The sweep: the lines of held deliveries after `after` (by id, a cursor that wraps round),
 * released where nothing holds them any more. Returns the cursor for the next round. Cheap
 * when none is held: one probe of the status index.
 */
export async function sweepHeld(db: Knex, after: string, now: number): Promise<string> {
  const held = (await db('webhook_deliveries').select('id', 'subscription_id', 'object_id').where('status', 'held').where('id', '>', after).orderBy('id').limit(SWEEP_BATCH)) as Array<{ id: string } & Line>;
  if (held.length === 0) return '';
  await releaseLines(db, held, now);
  return held.length < SWEEP_BATCH ? '' : held[held.length - 1]!.id;
}

/**
 * For held deliveries: the delivery at the head of each one's line being attempted now, that it
 * waits behind (none while the one before it waits for the fan-out).
 */
export async function heads(db: Knex | Knex.Transaction, rows: ReadonlyArray<{ id: string; status: string; subscription_id: string; object_id: string | null }>): Promise<Map<string, string>> {
  const lines: Line[] = [];
  for (const r of rows) if (r.status === 'held' && r.object_id !== null) lines.push({ subscription_id: r.subscription_id, object_id: r.object_id });
  const found = new Map<string, string>();
  if (lines.length === 0) return found;
  const byLine = new Map((await headsOf(db, [...new Map(lines.map((l) => [key(l), l])).values()])).filter((h) => h.status === 'pending').map((h) => [key(h), h.id]));
  for (const r of rows) {
    const head = r.status === 'held' && r.object_id !== null ? byLine.get(key({ subscription_id: r.subscription_id, object_id: r.object_id })) : undefined;
    if (head !== undefined) found.set(r.id, head);
  }
  return found;
}
