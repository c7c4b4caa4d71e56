import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { redisClient, type RedisClient } from '../db/redis.js';

/**
 * "New events were committed": lets a delivery worker wake at once instead of waiting for its
 * next poll. Within one process an in-memory signal; across processes, with Redis, a pub/sub
 * channel. A lost signal costs only latency: workers poll anyway.
 */
export interface Notifier {
  /** Call after a commit that wrote events or made deliveries due. */
  notify(): void;
  /** Calls `listener` on every signal, from this process or (with Redis) any other. */
  subscribe(listener: () => void): () => void;
  /** True when signals from other processes arrive (Redis pub/sub is connected). */
  crossProcess(): boolean;
  close(): Promise<void>;
}

export function createNotifier(redisUrl: string | undefined, prefix: string, publisher: { isReady(): boolean; publish(channel: string, message: string): Promise<unknown> } | undefined, log: Logger): Notifier {
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const channel = `${prefix}outbox`;
  let subscriber: RedisClient | undefined;

  const ensureSubscriber = () => {
    if (subscriber || !redisUrl) return;
    subscriber = redisClient(redisUrl);
    subscriber.on('error', (err: Error) => log.debug({ err: err.message }, 'notifier subscriber error'));
    subscriber
      .connect()
      .then(() => subscriber?.subscribe(channel, () => local.emit('signal')))
      .catch((err: Error) => log.warn({ err: err.message }, 'notifier cannot subscribe; workers fall back to polling'));
  };

  // Commits that end in the same turn of the event loop share one message: a worker needs to
  // wake, not to count (under load, one PUBLISH for many writes instead of one each).
  let publishing = false;
  const publish = () => {
    publishing = false;
    if (publisher?.isReady()) publisher.publish(channel, '1').catch(() => undefined);
  };

  return {
    notify() {
      local.emit('signal');
      if (publisher && !publishing) {
        publishing = true;
        setImmediate(publish);
      }
    },
    subscribe(listener) {
      ensureSubscriber();
      local.on('signal', listener);
      return () => local.off('signal', listener);
    },
    crossProcess: () => subscriber?.isReady ?? false,
    async close() {
      local.removeAllListeners();
      if (subscriber?.isOpen) subscriber.destroy();
    },
  };
}
