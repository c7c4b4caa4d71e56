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

/**
 * After a signal to other processes, the next waits this long at most: while commits keep coming
 * (a busy server, hundreds a second), one message every SIGNAL_SPACING_MS wakes the other
 * processes' workers, instead of one a commit, each a round trip to Redis or PostgreSQL. A
 * commit after a quiet spell still signals at once (its turn of the event loop over).
 */
export const SIGNAL_SPACING_MS = 10;

export function createNotifier(channel: Channel | undefined): Notifier {
  const local = new EventEmitter();
  local.setMaxListeners(0);

  // Commits that end in the same turn of the event loop share one message (a worker needs to
  // wake, not to count), and messages are spaced by SIGNAL_SPACING_MS: `owed` says a commit
  // came during the spacing, whose message goes at its end.
  let spacing: NodeJS.Timeout | 'soon' | undefined;
  let owed = false;
  let closed = false;
  const publish = () => {
    if (closed) return;
    channel?.publish();
    spacing = setTimeout(() => {
      spacing = undefined;
      if (owed) {
        owed = false;
        publish();
      }
    }, SIGNAL_SPACING_MS);
    spacing.unref();
  };

  return {
    notify() {
      local.emit('signal');
      if (!channel) return;
      if (spacing) {
        owed = owed || spacing !== 'soon';
        return;
      }
      spacing = 'soon';
      setImmediate(publish);
    },
    subscribe(listener) {
      channel?.listen(() => local.emit('signal'));
      local.on('signal', listener);
      return () => local.off('signal', listener);
    },
    crossProcess: () => channel?.listening() ?? false,
    async close() {
      closed = true;
      if (spacing && spacing !== 'soon') clearTimeout(spacing);
      local.removeAllListeners();
      await channel?.close();
    },
  };
}
