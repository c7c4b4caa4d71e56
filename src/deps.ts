import { createMetrics, type Metrics } from './metrics/registry.js';
import type { Knex } from 'knex';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { Config } from './common/config.js';
import { createDb } from './db/connect.js';
import type { Dialect } from './db/dialect.js';
import { dialectFor } from './db/dialects/index.js';
import { createReads, type Reads } from './db/reads.js';
import { serializeError } from './db/errors.js';
import { createRedis, type Redis } from './db/redis.js';
import { createNotifier, redisChannel, type Notifier } from './events/notify.js';
import { pgChannel } from './events/pg-channel.js';
import { systemClock, type Clock } from './common/clock.js';
import type { Keyring } from './secrets/keyring.js';
import { loadKeyring } from './secrets/load.js';
import { flushTraces, traceLogOptions, tracingOn } from './tracing/tracer.js';

export interface Deps {
  readonly config: Config;
  readonly db: Knex;
  /** Every difference between SQLite, MySQL and PostgreSQL, for this database (db/dialects/). */
  readonly dialect: Dialect;
  /** The hot path's reads, run by the driver (db/reads.ts). */
  readonly reads: Reads;
  readonly redis: Redis | undefined;
  readonly log: Logger;
  readonly clock: Clock;
  /** Tells delivery workers that events were committed. */
  readonly notifier: Notifier;
  /** This process's Prometheus series (served on METRICS_PORT when set). */
  readonly metrics: Metrics;
  /** Seals and opens secrets stored in the database (SECRET_KEYS, or the embedded key file). */
  readonly secrets: Keyring;
  close(): Promise<void>;
}

export interface DepsOverrides {
  clock?: Clock;
  log?: Logger;
}

/**
 * The service's logger: JSON lines to stdout (or `destination`). Secrets are redacted by name,
 * and a database error is logged as its code, operation and table, never with the values
 * bound to its statement (db/errors.ts).
 *
 * Stdout is written asynchronously (pino's destination with `sync: false`): a line leaves at
 * once, by libuv's thread pool, and the lines logged while a write is under way go together in
 * the next, so a busy server makes a write of many lines instead of a system call a line on its
 * event loop (the access log's line a request, 13 to 21 microseconds of a POST's CPU measured
 * here). pino writes out what is left when the process exits (SIGTERM, an uncaught error);
 * a process killed -9 can lose the lines of its last write.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { pid: process.pid },
    serializers: { err: serializeError },
    redact: { paths: ['token', 'secret', '*.token', '*.secret', 'headers.authorization'], censor: '[redacted]' },
    // With traces, each line written within a span names it (trace_id, span_id).
    ...(tracingOn() ? traceLogOptions : {}),
  };
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}

/** Builds the shared pieces once; everything downstream receives them as a plain object. */
export function createDeps(config: Config, overrides: DepsOverrides = {}): Deps {
  const secrets = loadKeyring(config);
  const log = overrides.log ?? createLogger(config.logLevel);
  const db = createDb(config.database, log);
  const dialect = dialectFor(db);
  const reads = createReads(db, config.database);
  const redis = config.redisUrl ? createRedis(config.redisUrl, log) : undefined;
  const notifier = createNotifier(
    redis && config.redisUrl
      ? redisChannel(config.redisUrl, config.redisPrefix, { isReady: () => redis.isReady(), publish: (c, m) => redis.client.publish(c, m) }, log)
      : dialect.notifies && 'url' in config.database
        ? pgChannel(config.database.url, db, log)
        : undefined,
  );
  const clock = overrides.clock ?? systemClock;
  return Object.freeze({
    config,
    db,
    dialect,
    reads,
    redis,
    log,
    notifier,
    metrics: createMetrics({ db, redis, redisConfigured: config.redisUrl !== undefined, now: () => clock.now() }),
    clock,
    secrets,
    async close() {
      await notifier.close();
      await redis?.close();
      reads.close();
      await db.destroy();
      // The spans still buffered leave before the process does.
      await flushTraces();
    },
  });
}

/** What the kernel's write handlers use: the database (its transactions and reads), the clock, and the outbox signal. */
export type WriteDeps = Pick<Deps, 'db' | 'reads' | 'clock' | 'notifier'>;
