import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.js';
import type { Metrics } from '../metrics/registry.js';
import { recordOutcomes, type Finished } from './record.js';
import { dialectFor } from '../db/dialects/index.js';
import type { Job } from './claim.js';
import type { HandOff } from './ordering.js';

/**
 * Finished attempts are recorded together: a batch goes once this many are waiting, or this
 * long after the first of them finished. One transaction per attempt would make recording,
 * not sending, the limit (on SQLite, one commit per delivery on the connection the API needs).
 */
const RECORD_BATCH = 50;
const RECORD_WAIT_MS = 10;
/*
 * A per_object line's next delivery waits for its record, so an attempt of one gathers for the
 * dialect's lineRecordWaitMs instead. bench:webhooks BENCH_ORDERING, per_object / none: on SQLite
 * 0.81 at 3 ms and 0.74 at 10 (a step of a line is a gathering, a commit and a hand-off, all in
 * one process); on PostgreSQL and MariaDB 0.63-0.67 at 3 ms and 0.65-0.78 at 10 in different
 * runs, where each record's statements cost the database server's CPU (per_object took 2.4-2.6
 * times none's there a delivery), so fewer, larger records (bench/HISTORY.md).
 */
/**
 * Batches written at once: up to four, so that one finishing while another is written need not
 * wait for it. A per_object line moves on only once its delivery is recorded (and its batch does
 * more: the next of each line is released and handed over), so with one at a time the commits,
 * not the sends, were its limit (bench:webhooks BENCH_ORDERING on MariaDB: 0.63 of none; 0.75 with
 * four). Each takes its locks in the same order as another worker's batch would (record.ts), so
 * two cannot deadlock each other either.
 */
const MAX_RECORDING = 4;

/**
 * When the record gathering until `due` (undefined: none is) goes once an attempt that may wait
 * `wait` ms joins it at `now`: at the earlier of the two, so an attempt may bring a record
 * forward and never puts it off.
 */
export function recordDue(due: number | undefined, now: number, wait: number): number {
  return due !== undefined && due <= now + wait ? due : now + wait;
}

export interface RecorderDeps {
  db: Knex;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  retryDelays: readonly number[];
  /** The worker, as its log lines name it. */
  workerId: string;
  /** Called after each batch: retries were just scheduled, so the worker may need to wake sooner. */
  recorded: () => void;
  /**
   * The next deliveries of the per_object lines a batch finished are taken on by the worker at
   * once (webhooks/ordering.ts HandOff): `handOff` says to whom and how many it can take, and
   * `handed` gets them, leased to it.
   */
  handOff?: () => HandOff;
  handed?: (jobs: Job[]) => void;
}

/**
 * Records a worker's finished attempts in batches, batching whatever finishes while a batch is
 * being written. A batch that cannot be written (the database is away) goes back to the front
 * of the queue and is tried again after a pause, so a send is not repeated for want of its record.
 */
export class AttemptRecorder {
  private finished: Finished[] = [];
  private readonly recording = new Set<Promise<void>>();
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  /** When the timer set fires (performance.now()). */
  private due = 0;

  /** How long a per_object line's attempt gathers others before its record (the dialect's lineRecordWaitMs). */
  private readonly lineWaitMs: number;

  constructor(private readonly deps: RecorderDeps) {
    this.lineWaitMs = dialectFor(deps.db).lineRecordWaitMs;
  }

  add(attempt: Finished): void {
    this.finished.push(attempt);
    if (this.finished.length >= RECORD_BATCH) {
      void this.record();
      return;
    }
    // A per_object line waits for this record to move on: it may gather for less.
    const wait = attempt.job.delivery.object_id != null ? Math.min(this.lineWaitMs, RECORD_WAIT_MS) : RECORD_WAIT_MS;
    const now = performance.now();
    const due = recordDue(this.timer === undefined ? undefined : this.due, now, wait);
    if (this.timer !== undefined && due === this.due) return;
    clearTimeout(this.timer);
    this.due = due;
    this.timer = setTimeout(() => void this.record(), due - now);
  }

  /** At stop: records what is left, in up to `rounds` tries; answers how many stay unrecorded. */
  async flush(rounds = 5): Promise<number> {
    for (let round = 0; round < rounds && (this.finished.length > 0 || this.recording.size > 0); round++) await this.record();
    return this.finished.length;
  }

  /** Writes the batch waiting, when fewer than MAX_RECORDING are being written; resolves when a batch being written is. */
  private record(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.recording.size >= MAX_RECORDING || this.finished.length === 0) return this.recording.size > 0 ? Promise.race(this.recording) : Promise.resolve();
    const batch = this.finished;
    this.finished = [];
    const { db, clock, log, metrics, retryDelays, workerId } = this.deps;
    const handOff = this.deps.handOff?.();
    const recording: Promise<void> = recordOutcomes(db, batch, retryDelays, clock.now(), handOff)
      .then(
        ({ failed, handed }) => {
          this.failures = 0;
          if (handed.length > 0) this.deps.handed?.(handed);
          const retrying = failed.filter((a) => a.next_attempt_at).length;
          metrics.deliveries.inc({ outcome: 'succeeded' }, batch.length - failed.length);
          if (retrying > 0) metrics.deliveries.inc({ outcome: 'retrying' }, retrying);
          if (failed.length > retrying) metrics.deliveries.inc({ outcome: 'failed' }, failed.length - retrying);
          // Never the secret or the body: which delivery, what happened, what comes next.
          for (const attempt of failed) log.warn({ worker: workerId, ...attempt }, attempt.next_attempt_at ? 'delivery attempt failed; will retry' : 'delivery attempt failed; no retries left');
        },
        async (err: unknown) => {
          this.failures++;
          const pauseMs = Math.min(100 * 2 ** this.failures, 5000);
          log.error({ err, worker: workerId, deliveries: batch.length, retry_in_ms: pauseMs }, 'cannot record attempts yet; will try again');
          this.finished = [...batch, ...this.finished];
          await new Promise((resolve) => setTimeout(resolve, pauseMs));
        },
      )
      .finally(() => {
        this.recording.delete(recording);
        this.deps.recorded();
        if (this.finished.length > 0) void this.record();
      });
    this.recording.add(recording);
    return recording;
  }
}
