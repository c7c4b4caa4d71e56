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

/** A client with our connection settings, to one node or (for a cluster URL) a cluster; it connects when told to. */
export function redisClient(url: string): RedisClient {
  const cluster = clusterNodes(url);
  if (!cluster) return createClient({ url, disableOfflineQueue: true, socket: SOCKET });
  return createCluster({
    rootNodes: cluster.nodes.map((node) => ({ url: node })),
    // Every connection to a discovered node is made from these (credentials included).
    defaults: { disableOfflineQueue: true, socket: { ...SOCKET, ...(cluster.tls ? { tls: true as const } : {}) }, ...(cluster.username ? { username: cluster.username } : {}), ...(cluster.password ? { password: cluster.password } : {}) },
  });
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
  const client = redisClient(url);
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
