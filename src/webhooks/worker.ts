import { createAmqpSender, type AmqpSender } from './amqp.js';
import { withPassword } from './credentials.js';
import { transportOf } from './schemes.js';
import { createNatsSender, type NatsSender } from './nats.js';
import { deliveryBody } from './payloads.js';
import { randomBytes } from 'node:crypto';
import type { Deps } from '../deps.js';
import { claimDue, nextDue, type Job } from './claim.js';
import { Throttle } from './throttle.js';
import { fanOut } from './fanout.js';
import { failUnsendable } from './record.js';
import { sweepHeld } from './ordering.js';
import { AttemptRecorder } from './recorder.js';
import { createSender, type Outcome, type Sender } from './send.js';
import { createResolve } from './ssrf.js';
import { signingSecrets } from './subscriptions.js';
import { Wakeup } from './wakeup.js';
import { traceAttempt } from './trace.js';
import { traceparentNow, tracingOn } from '../tracing/tracer.js';

const CLAIM_BATCH = 100;
/** How often a worker sweeps for held deliveries nothing holds any more (webhooks/ordering.ts). */
const SWEEP_EVERY_MS = 250;
/**
 * After a round that found work but filled no batch, the next one waits: half a millisecond for
 * each event the round fanned out, from GATHER_MS to MAX_GATHER_MS, signals or not. Under a
 * steady stream of writes a round (a fan-out and a claim, each a transaction of a few
 * statements) then takes the events written meanwhile, instead of turning as fast as it can for
 * one or two: an inline worker that turned for every write cost each write 54 µs of the
 * server's CPU on MariaDB (bench:write, inline against off), and one that always waited 10 ms
 * still cost 2,000 writes a second 14% of them (0.86) on a machine whose system calls are dear.
 * At that rate a round finds tens of events and the wait settles at 25 ms (0.96 on MariaDB).
 * At 200 writes a second a round finds a few and waits 10 ms, as before (bench:webhooks on
 * MariaDB: p50 41 ms, against 39-40 with 10 ms always and 48 with 25 ms always); the wait grows
 * and shrinks with the stream, so a backlog's last rounds do not hold the next events long.
 * A round that filled a batch goes again at once: a backlog drains at full speed. The wait is
 * what a round adds to a delivery's latency at most.
 */
export const GATHER_MS = 10;
export const MAX_GATHER_MS = 25;

/** How long the worker waits, in milliseconds, after a round that fanned out `fanned` events without filling a batch. */
export function gatherFor(fanned: number): number {
  return Math.min(MAX_GATHER_MS, Math.max(GATHER_MS, fanned / 2));
}

/** What a round found: nothing, some work, or a full batch (more is likely waiting); counted by found in wsapi_webhook_worker_rounds_total. */
type Found = 'nothing' | 'some' | 'full';

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
  /**
   * Renders a stored event (the latest shape) in a subscription's API version (Versions.eventDown);
   * without it, events are sent as stored.
   */
  render?: (event: string, apiVersion: string) => string;
}

type WorkerDeps = Pick<Deps, 'db' | 'dialect' | 'clock' | 'log' | 'config' | 'notifier' | 'metrics' | 'secrets'> & Partial<Pick<Deps, 'redis'>>;

export function startWorker(deps: WorkerDeps, options: WorkerOptions = {}): Worker {
  return new DeliveryWorker(deps, options);
}

class DeliveryWorker implements Worker {
  readonly id = `wrk_${randomBytes(6).toString('hex')}`;
  private readonly throttle: Throttle;
  private readonly sender: Sender;
  /** Publishes to nats:// and tls:// destinations (webhooks/nats.ts). */
  private readonly nats: NatsSender;
  /** Publishes to amqp:// and amqps:// destinations (webhooks/amqp.ts). */
  private readonly amqp: AmqpSender;
  private readonly wakeup = new Wakeup();
  private readonly recorder: AttemptRecorder;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly unsubscribe: () => void;
  /**
   * Claims wait until a quarter of the slots are free: a claim for every attempt that finishes
   * would keep the database busy with tiny transactions (on SQLite, on the one connection the
   * API needs too).
   */
  private readonly minClaim: number;
  private running = true;
  private claims = 0;
  /** Where the sweep of held deliveries goes on from (webhooks/ordering.ts), and when it last ran. */
  private swept = '';
  private sweptAt = -Infinity;
  private readonly loopDone: Promise<void>;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly options: WorkerOptions,
  ) {
    const { db, clock, log, config, notifier, metrics } = deps;
    this.throttle = new Throttle(db, deps.redis, config.redisPrefix, log);
    const destinations = { resolve: createResolve(config.webhookDnsServers), allowPrivate: config.webhookAllowPrivate, timeoutMs: config.webhookTimeoutMs, clock };
    this.sender = createSender(destinations);
    this.nats = createNatsSender(destinations);
    this.amqp = createAmqpSender(destinations);
    this.recorder = new AttemptRecorder({
      db,
      clock,
      log,
      metrics,
      retryDelays: config.webhookRetryDelays,
      workerId: this.id,
      recorded: this.wakeup.signal,
      handOff: () => ({ owner: this.newLease(), leaseMs: config.webhookLeaseMs, limit: this.running ? this.freeSlots() : 0 }),
      handed: (jobs) => void this.takeOn(jobs),
    });
    this.minClaim = Math.max(1, Math.floor(config.webhookConcurrency / 4));
    this.unsubscribe = notifier.subscribe(this.wakeup.signal);
    this.loopDone = this.loop();
    log.info({ worker: this.id, concurrency: config.webhookConcurrency }, 'delivery worker started');
  }

  async stop(): Promise<void> {
    const { log } = this.deps;
    this.running = false;
    this.wakeup.signal();
    this.unsubscribe();
    await this.loopDone;
    await Promise.allSettled([...this.inFlight]);
    // What cannot be recorded by now is left to the leases: those deliveries are sent again.
    const unrecorded = await this.recorder.flush();
    if (unrecorded > 0) log.error({ worker: this.id, deliveries: unrecorded }, 'stopped with attempts unrecorded; they will be sent again when their leases end');
    await this.sender.close();
    await this.nats.close();
    await this.amqp.close();
    log.info({ worker: this.id }, 'delivery worker stopped');
  }

  /** A lease of its own for each claim (and each hand-off): recording checks a delivery is still held by it. */
  private newLease(): string {
    return `${this.id}:${++this.claims}`;
  }

  /** Sends deliveries handed to it already leased and read (the next of per_object lines it finished), as it sends what it claims. */
  private async takeOn(jobs: Job[]): Promise<void> {
    const { log } = this.deps;
    try {
      // Stopping: their lease runs out and another worker's claim takes them.
      if (this.running) await this.sendJobs(jobs);
    } catch (err) {
      // As above: nothing is lost, their leases end.
      log.error({ err, worker: this.id }, 'cannot take on the deliveries handed over; their leases will end');
    }
  }

  /** Fails what cannot be sent (subscription off or deleted), then sends the rest as the throttle admits them. */
  private async sendJobs(jobs: Job[]): Promise<void> {
    const { db, clock } = this.deps;
    // Test deliveries go out even to a subscription that is off: the client asked for them.
    const unsendable = jobs.filter((j) => j.deleted || (!j.enabled && j.delivery.event_type !== 'webhook.test'));
    if (unsendable.length > 0) await failUnsendable(db, unsendable, clock.now());
    for (const job of await this.throttle.admit(jobs.filter((j) => !unsendable.includes(j)), () => clock.now())) this.deliver(job);
  }

  private freeSlots(): number {
    return this.deps.config.webhookConcurrency - this.inFlight.size;
  }

  /** Sends one job, as a span of the event's trace when traced (webhooks/trace.ts). */
  private send(job: Job): Promise<Outcome> {
    return tracingOn() ? traceAttempt(job, () => this.attempt(job)) : this.attempt(job);
  }

  /** One attempt at a job; a secret the keyring cannot open is a failed attempt (retried), never a crash. */
  private attempt(job: Job): Promise<Outcome> {
    const { clock, log, secrets: keyring } = this.deps;
    let secrets: string[];
    try {
      secrets = signingSecrets({ id: job.delivery.subscription_id, ...job }, clock.now(), keyring);
    } catch (err) {
      log.error({ subscription: job.delivery.subscription_id, err }, 'cannot open the signing secret');
      return Promise.resolve({ startedAt: clock.now(), durationMs: 0, status: null, excerpt: null, error: 'the signing secret cannot be opened with SECRET_KEYS' });
    }
    let url: string;
    try {
      url = withPassword(job.url, job.urlPassword === null ? null : keyring.open(job.urlPassword, job.delivery.subscription_id));
    } catch (err) {
      log.error({ subscription: job.delivery.subscription_id, err }, 'cannot open the destination password');
      return Promise.resolve({ startedAt: clock.now(), durationMs: 0, status: null, excerpt: null, error: 'the destination password cannot be opened with SECRET_KEYS' });
    }
    const message = { url, eventId: job.delivery.event_id, body: deliveryBody(job.payloadKind, job.payloadKind === 'full' && this.options.render ? this.options.render(job.payload, job.apiVersion) : job.payload), secrets, traceparent: traceparentNow() };
    const transport = transportOf(url.slice(0, url.indexOf(':') + 1));
    if (transport === 'nats') return this.nats.send({ ...message, subscriptionId: job.delivery.subscription_id });
    if (transport === 'amqp') return this.amqp.send({ ...message, type: job.delivery.event_type });
    return this.sender.send(message);
  }

  private deliver(job: Job): void {
    const attempt = this.send(job)
      .then((outcome) => {
        this.deps.metrics.deliveryDuration.observe(outcome.durationMs / 1000);
        this.recorder.add({ job, outcome });
      })
      .finally(() => {
        this.inFlight.delete(attempt);
        this.wakeup.signal();
      });
    this.inFlight.add(attempt);
  }

  /**
   * Until the next retry comes due, at most one poll interval: short for a separate worker
   * that hears nothing, longer with Redis signals, and longest for an inline worker, which an
   * idle server then barely touches the database for.
   */
  private async idleFor(): Promise<number> {
    const { db, clock, notifier } = this.deps;
    const poll = this.options.inline ? POLL_INLINE_MS : notifier.crossProcess() ? POLL_SIGNALLED_MS : POLL_MS;
    const due = await nextDue(db).catch(() => undefined);
    return due === undefined ? poll : Math.min(poll, Math.max(due - clock.now(), 5));
  }

  /** One round: fans out committed events, then claims and sends what is due. What it found, and how many events it fanned out. */
  private async cycle(): Promise<{ found: Found; fanned: number }> {
    const { db, clock, config, dialect } = this.deps;
    const fanBatch = dialect.fanOutBatch;
    const fanned = await fanOut(db, clock.now(), fanBatch, config.webhookRetryDelays.length);
    let found: Found = fanned.events === fanBatch ? 'full' : fanned.events > 0 ? 'some' : 'nothing';
    // The claim on a turn of its own: events fanned out, then the requests waiting, then the claim.
    if (found !== 'nothing') await new Promise((resolve) => setImmediate(resolve));
    // Held deliveries a race left behind (their line's head finished as they joined it) go now;
    // at most every SWEEP_EVERY_MS, as such a race is rare.
    if (performance.now() - this.sweptAt >= SWEEP_EVERY_MS) {
      this.sweptAt = performance.now();
      this.swept = await sweepHeld(db, this.swept, clock.now());
    }
    if (this.freeSlots() >= this.minClaim && this.running) {
      const limit = Math.min(this.freeSlots(), CLAIM_BATCH);
      const jobs = await claimDue(db, this.newLease(), clock.now(), config.webhookLeaseMs, limit);
      await this.sendJobs(jobs);
      if (jobs.length >= limit) found = 'full';
      else if (jobs.length > 0 && found === 'nothing') found = 'some';
    }
    return { found, fanned: fanned.events };
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.wakeup.reset();
      let round: { found: Found; fanned: number };
      try {
        round = await this.cycle();
        this.deps.metrics.workerRounds.inc({ found: round.found });
      } catch (err) {
        this.deps.log.error({ err, worker: this.id }, 'worker cycle failed; retrying shortly');
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      // Whatever came in meanwhile (the API's requests, in an inline worker) goes first.
      await new Promise((resolve) => setImmediate(resolve));
      // Slots short: wait, without touching the database, until finishing attempts free enough.
      while (this.running && this.freeSlots() < this.minClaim) {
        this.wakeup.reset();
        await this.wakeup.sleep(1000);
      }
      if (!this.running) break;
      // A full batch: go again at once. Some work: gather (gatherFor). Nothing: sleep until the
      // outbox signal or the next due retry, or poll (rarely for an inline worker, which hears
      // its own process's writes).
      if (round.found === 'some') await new Promise((resolve) => setTimeout(resolve, gatherFor(round.fanned)));
      else if (round.found === 'nothing') await this.wakeup.sleep(await this.idleFor());
    }
  }
}
