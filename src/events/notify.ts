import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { redisClient, type RedisClient } from '../db/redis.js';

/**
 * "New events were committed": lets a delivery worker wake at once instead of waiting for its
 * next poll. Within one process an in-memory signal; across processes a channel: Redis pub/sub
 * when there is Redis, else PostgreSQL's LISTEN/NOTIFY on PostgreSQL (events/pg-channel.ts).
 * A lost signal costs only latency: workers poll anyway.
 */
export interface Notifier {
  /** Call after a commit that wrote events or made deliveries due. */
  notify(): void;
  /** Calls `listener` on every signal, from this process or (with a channel) any other. */
  subscribe(listener: () => void): () => void;
  /** True when signals from other processes arrive (the channel is listened to). */
  crossProcess(): boolean;
  close(): Promise<void>;
}

/** What carries the signal between processes. */
export interface Channel {
  /** Starts listening (once), calling `onSignal` on each message. */
  listen(onSignal: () => void): void;
  publish(): void;
  listening(): boolean;
  close(): Promise<void>;
}

/** Redis pub/sub: `publisher` is the process's Redis client; the subscriber is a connection of its own. */
export function redisChannel(redisUrl: string, prefix: string, publisher: { isReady(): boolean; publish(channel: string, message: string): Promise<unknown> }, log: Logger): Channel {
  const name = `${prefix}outbox`;
  let subscriber: RedisClient | undefined;
  return {
    listen(onSignal) {
      if (subscriber) return;
      subscriber = redisClient(redisUrl);
      subscriber.on('error', (err: Error) => log.debug({ err: err.message }, 'notifier subscriber error'));
      subscriber
        .connect()
        .then(() => subscriber?.subscribe(name, onSignal))
        .catch((err: Error) => log.warn({ err: err.message }, 'notifier cannot subscribe; workers fall back to polling'));
    },
    publish() {
      if (publisher.isReady()) publisher.publish(name, '1').catch(() => undefined);
    },
    listening: () => subscriber?.isReady ?? false,
    async close() {
      if (subscriber?.isOpen) subscriber.destroy();
    },
  };
}

export function createNotifier(channel: Channel | undefined): Notifier {
  const local = new EventEmitter();
  local.setMaxListeners(0);

  // Commits that end in the same turn of the event loop share one message: a worker needs to
  // wake, not to count (under load, one message for many writes instead of one each).
  let publishing = false;
  const publish = () => {
    publishing = false;
    channel?.publish();
  };

  return {
    notify() {
      local.emit('signal');
      if (channel && !publishing) {
        publishing = true;
        setImmediate(publish);
      }
    },
    subscribe(listener) {
      channel?.listen(() => local.emit('signal'));
      local.on('signal', listener);
      return () => local.off('signal', listener);
    },
    crossProcess: () => channel?.listening() ?? false,
    async close() {
      local.removeAllListeners();
      await channel?.close();
    },
  };
}
