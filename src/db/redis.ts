import { createClient } from 'redis';
import type { Logger } from 'pino';

/** A client with our connection settings; it connects when told to. */
export function redisClient(url: string) {
  return createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000) },
  });
}

export type RedisClient = ReturnType<typeof redisClient>;

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
    whenReady(timeoutMs) {
      if (client.isReady) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (ready: boolean) => {
          clearTimeout(timer);
          client.off('ready', onReady);
          resolve(ready);
        };
        const onReady = () => done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        client.on('ready', onReady);
      });
    },
    async close() {
      if (client.isOpen) client.destroy();
    },
  };
}
