import { createClient, createCluster } from 'redis';
import type { Logger } from 'pino';
import { clusterNodes } from '../common/config.js';

/**
 * What the service asks of Redis: a single node and a Redis Cluster both answer it. Keys a
 * script touches together share a hash tag (`{key:<id>}`), so they sit in one slot.
 */
export interface RedisClient {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  connect(): Promise<unknown>;
  destroy(): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  set(key: string, value: string, options: { EX: number }): Promise<unknown>;
  publish(channel: string, message: string): Promise<unknown>;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
}

const SOCKET = { connectTimeout: 2000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000) };

/**
 * No timer of node-redis's own per command. Its default makes an AbortSignal.timeout for each
 * (about 15 microseconds of the API's request, 2% of its CPU), and drops it as soon as the command is written:
 * it bounds a command's wait in the client's queue, never the wait for Redis's answer.
 * withDeadlines() bounds that one instead, with a timer per second.
 */
const COMMAND_OPTIONS = { timeout: 0 };

/** A client with our connection settings, to one node or (for a cluster URL) a cluster; it connects when told to. */
export function redisClient(url: string): RedisClient {
  const cluster = clusterNodes(url);
  if (!cluster) return createClient({ url, disableOfflineQueue: true, socket: SOCKET, commandOptions: COMMAND_OPTIONS });
  return createCluster({
    rootNodes: cluster.nodes.map((node) => ({ url: node })),
    commandOptions: COMMAND_OPTIONS,
    // Every connection to a discovered node is made from these (credentials included).
    defaults: { disableOfflineQueue: true, socket: { ...SOCKET, ...(cluster.tls ? { tls: true as const } : {}) }, ...(cluster.username ? { username: cluster.username } : {}), ...(cluster.password ? { password: cluster.password } : {}) },
  });
}

/** How long a command waits for Redis's answer before it fails (and its caller falls back), at least. */
export const COMMAND_TIMEOUT_MS = 5000;
/** Commands given within this long of each other share one deadline (and one timer). */
const DEADLINE_WINDOW_MS = 1000;

/**
 * `client` whose commands fail once Redis has not answered them in COMMAND_TIMEOUT_MS (up to a second
 * more): a Redis that is connected but silent (stopped, or behind a network that lost it) then
 * holds a request that long, not for good. The commands given in one second share one timer,
 * which rejects those still waiting. From then on the client says it is not ready, so callers
 * that ask (the limiter, the notifier) fall back at once instead of each waiting out a deadline,
 * until Redis answers anything again (the late answers to the abandoned commands, or the
 * connection's errors once it drops). Subscriptions have no deadline.
 */
export function withDeadlines(client: RedisClient): RedisClient {
  let waiting = new Set<(error: Error) => void>();
  let until = 0;
  let stalled = false;
  const expire = (overdue: Set<(error: Error) => void>) => {
    if (overdue.size === 0) return;
    stalled = true;
    const error = new Error(`Redis did not answer within ${COMMAND_TIMEOUT_MS} ms`);
    for (const reject of overdue) reject(error);
    overdue.clear();
  };
  const timed = <T>(command: () => Promise<T>): Promise<T> => {
    const now = Date.now();
    if (now >= until) {
      const started = (waiting = new Set());
      until = now + DEADLINE_WINDOW_MS;
      setTimeout(() => expire(started), DEADLINE_WINDOW_MS + COMMAND_TIMEOUT_MS).unref();
    }
    const window = waiting;
    return new Promise<T>((resolve, reject) => {
      window.add(reject);
      const answered = () => {
        stalled = false;
        window.delete(reject);
      };
      command().then(
        (value) => {
          answered();
          resolve(value);
        },
        (error: unknown) => {
          answered();
          reject(error);
        },
      );
    });
  };
  return {
    get isOpen() {
      return client.isOpen;
    },
    get isReady() {
      return client.isReady && !stalled;
    },
    connect: () => client.connect(),
    destroy: () => client.destroy(),
    on: (event, listener) => client.on(event, listener),
    eval: (script, options) => timed(() => client.eval(script, options)),
    evalSha: (sha, options) => timed(() => client.evalSha(sha, options)),
    set: (key, value, options) => timed(() => client.set(key, value, options)),
    publish: (channel, message) => timed(() => client.publish(channel, message)),
    subscribe: (channel, listener) => client.subscribe(channel, listener),
  };
}

export interface Redis {
  readonly client: RedisClient;
  /** True while a connection is up; callers fall back instead of waiting when it is not. */
  isReady(): boolean;
  /** Resolves true once connected, or false after `timeoutMs` (for one-shot commands such as the admin CLI). */
  whenReady(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * One Redis connection per process. Commands never queue while Redis is away
 * (disableOfflineQueue): they fail at once and the caller falls back, so a lost Redis costs no
 * latency. The client reconnects by itself in the background.
 */
export function createRedis(url: string, log: Logger): Redis {
  const client = withDeadlines(redisClient(url));
  let lastErrorLog = 0;
  client.on('error', (err: Error) => {
    // A reconnect loop reports the same error many times a second: one line per 10 s is enough.
    const now = Date.now();
    if (now - lastErrorLog > 10_000) {
      lastErrorLog = now;
      log.warn({ err: err.message }, 'redis connection error');
    }
  });
  client.connect().catch((err: Error) => log.error({ err: err.message }, 'redis connect gave up'));
  return {
    client,
    isReady: () => client.isReady,
    async whenReady(timeoutMs) {
      // Polled: a node client says 'ready', a cluster does not; both say isReady.
      const until = Date.now() + timeoutMs;
      while (!client.isReady && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      return client.isReady;
    },
    async close() {
      if (client.isOpen) client.destroy();
    },
  };
}
