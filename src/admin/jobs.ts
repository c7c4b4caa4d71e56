import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.js';
import { ApiError } from '../common/errors.js';
import { isIdOf, newId } from '../common/ids.js';
import type { Actor } from '../common/who.js';
import { iso } from '../db/iso.js';

/**
 * Jobs: work asked for through the administration area that runs off the request path (the
 * deletion of a workspace's test data), polled by id. Every server and worker process runs
 * queued jobs, one at a time each; a job is claimed under a lease that each step renews, so a
 * process that dies mid-job leaves it to another once the lease ends, and the job carries on
 * from where the data stands (its steps are idempotent).
 */
export const JOB_KINDS = ['delete_test_data'] as const;
export type JobKind = (typeof JOB_KINDS)[number];
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** How long a claim lasts without a step renewing it. */
export const JOB_LEASE_MS = 60_000;
/** How often an idle process looks for a queued job. */
const POLL_MS = 2_000;

interface JobRow {
  id: string;
  workspace_id: string;
  kind: JobKind;
  status: JobStatus;
  progress: string;
  error: string | null;
  created_by: string;
  created_at: number | string;
  started_at: number | string | null;
  finished_at: number | string | null;
}

/** A job as the internal API shows it. */
export function toJob(row: JobRow) {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    progress: JSON.parse(row.progress) as Record<string, number>,
    error: row.error,
    created_by: JSON.parse(row.created_by) as Actor,
    created_at: iso(row.created_at) as string,
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
  };
}
export type Job = ReturnType<typeof toJob>;

/**
 * The workspace's job of `kind` not yet finished, or a new one queued, in `trx`: asking twice
 * while one runs gives the same job. `fresh` says whether it was made now.
 */
export async function queueJob(trx: Knex.Transaction, workspaceId: string, kind: JobKind, actor: Actor, progress: Record<string, number>, now: number): Promise<{ job: Job; fresh: boolean }> {
  const open = (await trx('jobs').first('*').where({ workspace_id: workspaceId, kind }).whereIn('status', ['queued', 'running'])) as JobRow | undefined;
  if (open) return { job: toJob(open), fresh: false };
  const row: JobRow = { id: newId('job_'), workspace_id: workspaceId, kind, status: 'queued', progress: JSON.stringify(progress), error: null, created_by: JSON.stringify(actor), created_at: now, started_at: null, finished_at: null };
  await trx('jobs').insert(row);
  return { job: toJob(row), fresh: true };
}

/** The workspace's job by id; another workspace's is not found. */
export async function findJob(db: Knex, workspaceId: string, id: string): Promise<Job> {
  const row = isIdOf('job_', id) ? ((await db('jobs').first('*').where({ id, workspace_id: workspaceId })) as JobRow | undefined) : undefined;
  if (!row) throw new ApiError('not_found', `No job with id ${id}.`);
  return toJob(row);
}

/** What a running job may do: record its progress between its batches, which renews its lease. */
export interface JobStep {
  readonly job: { id: string; workspace_id: string; kind: JobKind };
  /**
   * Writes the progress and renews the lease. Throws JobInterrupted when the job must stop here:
   * this process is stopping (the job is queued again for another), or its lease ended and
   * another process took it.
   */
  progress(progress: Record<string, number>): Promise<void>;
}

/** Thrown by JobStep.progress: the job stops where it is, without being failed. */
export class JobInterrupted extends Error {
  constructor(readonly why: 'stopping' | 'taken') {
    super(`job interrupted: ${why}`);
  }
}

/** What runs a job of each kind: it returns when the job is done (or throws), calling `step.progress` between its batches. */
export type JobHandlers = Record<JobKind, (step: JobStep, progress: Record<string, number>) => Promise<void>>;

/** Claims the oldest job that is queued, or running under a lease that has ended; undefined when there is none. */
async function claim(db: Knex, owner: string, now: number): Promise<JobRow | undefined> {
  const candidates = (await db('jobs')
    .select('*')
    .where((w) => w.where('status', 'queued').orWhere((r) => r.where('status', 'running').where('lease_until', '<', now)))
    .orderBy('created_at')
    .limit(5)) as JobRow[];
  for (const row of candidates) {
    // Whoever changes the row first has it: the others update nothing.
    const taken = await db('jobs')
      .update({ status: 'running', lease_owner: owner, lease_until: now + JOB_LEASE_MS, started_at: row.started_at ?? now })
      .where('id', row.id)
      .andWhere((w) => w.where('status', 'queued').orWhere((r) => r.where('status', 'running').where('lease_until', '<', now)));
    if (taken === 1) return row;
  }
  return undefined;
}

/**
 * Runs queued jobs in this process until stopped: one at a time, looking every POLL_MS while
 * idle. A job's failure is recorded on it (and logged) and never stops the loop.
 */
export function startJobs(deps: { db: Knex; clock: Clock; log: Logger }, handlers: JobHandlers): { stop(): Promise<void>; poke(): void } {
  const owner = `jobs-${randomUUID()}`;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const finish = (id: string, status: JobStatus, error: string | null) => deps.db('jobs').update({ status, error, finished_at: deps.clock.now(), lease_owner: null, lease_until: null }).where({ id, lease_owner: owner });
  const runOne = async (row: JobRow) => {
    const step: JobStep = {
      job: row,
      async progress(progress) {
        const mine = { id: row.id, lease_owner: owner };
        if (stopped) {
          await deps.db('jobs').update({ progress: JSON.stringify(progress), status: 'queued', lease_owner: null, lease_until: null }).where(mine);
          throw new JobInterrupted('stopping');
        }
        if ((await deps.db('jobs').update({ progress: JSON.stringify(progress), lease_until: deps.clock.now() + JOB_LEASE_MS }).where(mine)) !== 1) throw new JobInterrupted('taken');
      },
    };
    deps.log.info({ job: row.id, kind: row.kind }, 'job started');
    try {
      await handlers[row.kind](step, JSON.parse(row.progress) as Record<string, number>);
      await finish(row.id, 'succeeded', null);
      deps.log.info({ job: row.id, kind: row.kind }, 'job succeeded');
    } catch (err) {
      if (err instanceof JobInterrupted) {
        deps.log.info({ job: row.id, kind: row.kind, why: err.why }, 'job interrupted; it carries on in another process');
        return;
      }
      deps.log.error({ err, job: row.id, kind: row.kind }, 'job failed');
      await finish(row.id, 'failed', err instanceof Error ? err.message.slice(0, 1000) : String(err)).catch(() => undefined);
    }
  };
  const tick = async () => {
    timer = undefined;
    try {
      for (let row = await claim(deps.db, owner, deps.clock.now()); row && !stopped; row = await claim(deps.db, owner, deps.clock.now())) await runOne(row);
    } catch (err) {
      deps.log.warn({ err }, 'could not look for jobs; will retry');
    }
    if (!stopped) timer = setTimeout(() => poke(), POLL_MS).unref();
  };
  const poke = () => {
    if (stopped || running) return;
    if (timer) clearTimeout(timer);
    running = tick().finally(() => (running = undefined));
  };
  poke();
  return {
    poke,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
