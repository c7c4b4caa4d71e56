import type { Logger } from 'pino';
import type { Redis } from '../db/redis.js';
import type { Clock } from '../common/clock.js';
import { MemoryWindowStore } from './memory-store.js';
import { RedisWindowStore } from './redis-store.js';
import type { HitOptions, WindowResult, WindowStore } from './window.js';

/**
 * Redis when it answers, this process's memory when it does not: the service keeps serving
 * while Redis is away, limiting per process, and says so in its log when it switches.
 */
export class FallbackWindowStore implements WindowStore {
  private degraded = false;

  constructor(
    private readonly redis: Redis,
    private readonly primary: RedisWindowStore,
    private readonly fallback: MemoryWindowStore,
    private readonly log: Logger,
  ) {}

  async hit(key: string, limit: number, options: HitOptions): Promise<WindowResult> {
    if (this.redis.isReady()) {
      try {
        const result = await this.primary.hit(key, limit, options);
        if (this.degraded) {
          this.degraded = false;
          this.log.warn('rate limiter: Redis is reachable again; limits are shared across processes again');
        }
        return result;
      } catch (err) {
        this.degrade(err as Error);
      }
    } else {
      this.degrade(new Error('not connected'));
    }
    return this.fallback.hit(key, limit, options);
  }

  private degrade(err: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    this.log.error({ err: err.message }, 'rate limiter: Redis is unreachable; limiting per process until it is back');
  }
}

export interface Limiter {
  store: WindowStore;
  close(): void;
}

export function createLimiter(redis: Redis | undefined, prefix: string, clock: Clock, log: Logger): Limiter {
  const memory = new MemoryWindowStore(clock);
  const store = redis ? new FallbackWindowStore(redis, new RedisWindowStore(redis.client, prefix), memory, log) : memory;
  return { store, close: () => memory.close() };
}
