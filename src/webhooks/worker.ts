import { randomBytes } from 'node:crypto';
import type { Deps } from '../deps.js';
import { claimDue, deferClaimed, nextDue, type Job } from './claim.js';
import { Throttle } from './throttle.js';
import { fanOut } from './fanout.js';
import { failUnsendable, recordOutcomes, type Finished } from './record.js';
import { createSender, type Outcome } from './send.js';
import { createResolve } from './ssrf.js';
import { signingSecrets } from './subscriptions.js';

/**
 * Events fanned out per transaction. On SQLite every statement runs on the event loop
 * (better-sqlite3 is synchronous), and the inline worker shares that loop with the API: 40
 * keeps a fan-out to a few milliseconds (with 100 and the claim in the same turn, /v1/health's
 * p99 was 36 ms while 50,000 events were fanned out, against 26 ms; bench:backlog). MySQL's
 * statements do not hold the loop.
 */
const FAN_OUT_BATCH = { mysql: 500, sqlite: 40 } as const;
const CLAIM_BATCH = 100;
/**
 * Finished attempts are recorded together: a batch goes once this many are waiting, or this
 * long after the first of them finished. One transaction per attempt would make recording,
 * not sending, the limit (on SQLite, one commit per delivery on the connection the API needs).
 */
const RECORD_BATCH = 50;
const RECORD_WAIT_MS = 10;

export interface Worker {
  readonly id: string;
  /** Stops claiming, lets attempts in flight finish (each is bounded by the timeout), records them. */
  stop(): Promise<void>;
}

/**
 * The delivery worker: fans out committed events to deliveries, claims due deliveries with a
 * lease, sends them concurrently, and records every attempt. Any number can run side by side.
 * It sleeps when there is nothing to do and wakes on the outbox signal (same process, or
 * Redis pub/sub), or after a short poll.
 */
/** Without a signal from other processes, a separate worker polls this often. */
const POLL_MS = 100;
/** With Redis pub/sub, signals cross processes: polling only covers a lost message. */
const POLL_SIGNALLED_MS = 1000;
/**
 * An inline worker hears every write of its own process at once, so with nothing due it
 * sleeps: this long at most, which bounds the wait for events written by a process that has no
 * worker of its own and no Redis to tell.
 */
export const POLL_INLINE_MS = 5000;

export interface WorkerOptions {
  /** Runs in a server process (WORKER=inline): the writes it must hear are its own, signalled in process. */
  inline?: boolean;
}

export function startWorker(deps: Pick<Deps, 'db' | 'clock' | 'log' | 'config' | 'notifier' | 'metrics' | 'secrets'> & Partial<Pick<Deps, 'redis'>>, options: WorkerOptions = {}): Worker {
  const { db, clock, log, config, notifier, metrics, secrets: keyring } = deps;
  const throttle = new Throttle(db, deps.redis, config.redisPrefix, log);
  const id = `wrk_${randomBytes(6).toString('hex')}`;
  const sender = createSender({ resolve: createResolve(config.webhookDnsServers), allowPrivate: config.webhookAllowPrivate, timeoutMs: config.webhookTimeoutMs, clock });
  const retries = config.webhookRetryDelays.length;
  const inFlight = new Set<Promise<void>>();
  let finished: Finished[] = [];
  let recording: Promise<void> | undefined;
  let running = true;
  let claims = 0;
  let wake: (() => void) | undefined;
  // A signal that arrives mid-cycle is kept, so the next sleep returns at once.
  let signalled = false;
  const signal = () => {
    signalled = true;
    wake?.();
  };
  const unsubscribe = notifier.subscribe(signal);

  /**
   * Records what finished, batching whatever finishes while a batch is being written. A batch
   * that cannot be written (the database is away) goes back to the front of the queue and is
   * tried again after a pause, so a send is not repeated for want of its record.
   */
  let recordFailures = 0;
  let recordTimer: NodeJS.Timeout | undefined;
  function recordSoon(): void {
    if (finished.length < RECORD_BATCH) {
      recordTimer ??= setTimeout(() => void record(), RECORD_WAIT_MS);
      return;
    }
    void record();
  }

  function record(): Promise<void> {
    clearTimeout(recordTimer);
    recordTimer = undefined;
    if (recording || finished.length === 0) return recording ?? Promise.resolve();
    const batch = finished;
    finished = [];
    recording = recordOutcomes(db, batch, config.webhookRetryDelays, clock.now())
      .then(
        (failed) => {
          recordFailures = 0;
          const retrying = failed.filter((a) => a.next_attempt_at).length;
          metrics.deliveries.inc({ outcome: 'succeeded' }, batch.length - failed.length);
          if (retrying > 0) metrics.deliveries.inc({ outcome: 'retrying' }, retrying);
          if (failed.length > retrying) metrics.deliveries.inc({ outcome: 'failed' }, failed.length - retrying);
          // Never the secret or the body: which delivery, what happened, what comes next.
          for (const attempt of failed) log.warn({ worker: id, ...attempt }, attempt.next_attempt_at ? 'delivery attempt failed; will retry' : 'delivery attempt failed; no retries left');
        },
        async (err: unknown) => {
          recordFailures++;
          const pauseMs = Math.min(100 * 2 ** recordFailures, 5000);
          log.error({ err, worker: id, deliveries: batch.length, retry_in_ms: pauseMs }, 'cannot record attempts yet; will try again');
          finished = [...batch, ...finished];
          await new Promise((resolve) => setTimeout(resolve, pauseMs));
        },
      )
      .finally(() => {
        recording = undefined;
        // Retries were just scheduled: the loop may need to wake sooner than it planned.
        signal();
        if (finished.length > 0) void record();
      });
    return recording;
  }

  /** Sends one job; a secret the keyring cannot open is a failed attempt (retried), never a crash. */
  function send(job: Job): Promise<Outcome> {
    let secrets: string[];
    try {
      secrets = signingSecrets({ id: job.delivery.subscription_id, ...job }, clock.now(), keyring);
    } catch (err) {
      log.error({ subscription: job.delivery.subscription_id, err }, 'cannot open the signing secret');
      return Promise.resolve({ startedAt: clock.now(), durationMs: 0, status: null, excerpt: null, error: 'the signing secret cannot be opened with SECRET_KEYS' });
    }
    return sender.send({ url: job.url, eventId: job.delivery.event_id, body: job.payload, secrets });
  }

  function deliver(job: Job): void {
    const attempt = send(job)
      .then((outcome) => {
        metrics.deliveryDuration.observe(outcome.durationMs / 1000);
        finished.push({ job, outcome });
        recordSoon();
      })
      .finally(() => {
        inFlight.delete(attempt);
        signal();
      });
    inFlight.add(attempt);
  }

  /**
   * The jobs that may go now: all of a subscription without a limit; of one with
   * max_deliveries_per_second, as many as its bucket grants. The rest are handed back, each due
   * when its token will be there, so they wait without holding a slot other subscriptions need.
   */
  async function withinLimits(jobs: Job[]): Promise<Job[]> {
    const limited = new Map<string, Job[]>();
    const now: Job[] = [];
    for (const job of jobs) {
      if (job.maxPerSecond === null) now.push(job);
      else limited.set(job.delivery.subscription_id, [...(limited.get(job.delivery.subscription_id) ?? []), job]);
    }
    const deferred: Array<{ id: string; leaseOwner: string; at: number }> = [];
    for (const [subscription, group] of limited) {
      const rate = group[0]!.maxPerSecond!;
      const at = clock.now();
      const grant = await throttle.take(subscription, rate, group.length, at);
      now.push(...group.slice(0, grant.granted));
      group.slice(grant.granted).forEach((job, i) => deferred.push({ id: job.delivery.id, leaseOwner: job.delivery.lease_owner ?? '', at: at + grant.waitMs(i) }));
    }
    await deferClaimed(db, deferred);
    return now;
  }

  /** Sleeps until signalled or `ms` pass. */
  function sleep(ms: number): Promise<void> {
    if (signalled) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  }

  /**
   * Until the next retry comes due, at most one poll interval: short for a separate worker
   * that hears nothing, longer with Redis signals, and longest for an inline worker, which an
   * idle server then barely touches the database for.
   */
  async function idleFor(): Promise<number> {
    const poll = options.inline ? POLL_INLINE_MS : notifier.crossProcess() ? POLL_SIGNALLED_MS : POLL_MS;
    const due = await nextDue(db).catch(() => undefined);
    return due === undefined ? poll : Math.min(poll, Math.max(due - clock.now(), 5));
  }

  /**
   * Claims wait until a quarter of the slots are free: a claim for every attempt that finishes
   * would keep the database busy with tiny transactions (on SQLite, on the one connection the
   * API needs too).
   */
  const minClaim = Math.max(1, Math.floor(config.webhookConcurrency / 4));
  const freeSlots = () => config.webhookConcurrency - inFlight.size;

  async function loop(): Promise<void> {
    while (running) {
      signalled = false;
      let busy: boolean;
      try {
        const fanned = await fanOut(db, clock.now(), FAN_OUT_BATCH[config.database.client], retries, 1 + Math.floor(Math.random() * 2 ** 48));
        busy = fanned.events > 0;
        // The claim on a turn of its own: events fanned out, then the requests waiting, then the claim.
        if (busy) await new Promise((resolve) => setImmediate(resolve));
        if (freeSlots() >= minClaim && running) {
          const jobs = await claimDue(db, `${id}:${++claims}`, clock.now(), config.webhookLeaseMs, Math.min(freeSlots(), CLAIM_BATCH));
          // Test deliveries go out even to a subscription that is off: the client asked for them.
          const unsendable = jobs.filter((j) => j.deleted || (!j.enabled && j.delivery.event_type !== 'webhook.test'));
          if (unsendable.length > 0) await failUnsendable(db, unsendable, clock.now());
          for (const job of await withinLimits(jobs.filter((j) => !unsendable.includes(j)))) deliver(job);
          busy ||= jobs.length > 0;
        }
      } catch (err) {
        log.error({ err, worker: id }, 'worker cycle failed; retrying shortly');
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      // Whatever came in meanwhile (the API's requests, in an inline worker) goes first.
      await new Promise((resolve) => setImmediate(resolve));
      // Slots short: wait, without touching the database, until finishing attempts free enough.
      while (running && freeSlots() < minClaim) {
        signalled = false;
        await sleep(1000);
      }
      if (!running) break;
      // Busy: go again at once. Idle: sleep until the outbox signal or the next due retry, or
      // poll (rarely for an inline worker, which hears its own process's writes).
      if (!busy) await sleep(await idleFor());
    }
  }

  const running$ = loop();
  log.info({ worker: id, concurrency: config.webhookConcurrency }, 'delivery worker started');

  return {
    id,
    async stop() {
      running = false;
      signal();
      unsubscribe();
      await running$;
      await Promise.allSettled([...inFlight]);
      // What cannot be recorded by now is left to the leases: those deliveries are sent again.
      for (let round = 0; round < 5 && (finished.length > 0 || recording); round++) await record();
      if (finished.length > 0) log.error({ worker: id, deliveries: finished.length }, 'stopped with attempts unrecorded; they will be sent again when their leases end');
      await sender.close();
      log.info({ worker: id }, 'delivery worker stopped');
    },
  };
}
