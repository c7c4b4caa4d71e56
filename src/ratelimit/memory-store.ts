import type { Clock } from '../common/clock.js';
import { WINDOW_MS, type HitOptions, type WindowResult, type WindowStore } from './window.js';

/** Admission times of one key, oldest first; `head` skips the ones that left the window. */
interface Log {
  times: number[];
  head: number;
}

/** The exact sliding log of each key, in this process's memory (the embedded default, and Redis's fallback). */
export class MemoryWindowStore implements WindowStore {
  private readonly logs = new Map<string, Log>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clock: Clock) {
    // Keys that went quiet would otherwise stay forever (failed-auth addresses, above all).
    this.sweeper = setInterval(() => this.sweep(), WINDOW_MS);
    this.sweeper.unref();
  }

  hit(key: string, limit: number, options: HitOptions = {}): WindowResult {
    const now = options.now ?? this.clock.now();
    let log = this.logs.get(key);
    if (!log) {
      log = { times: [], head: 0 };
      this.logs.set(key, log);
    }
    while (log.head < log.times.length && (log.times[log.head] as number) <= now - WINDOW_MS) log.head++;
    if (log.head > 1024 && log.head * 2 > log.times.length) {
      log.times = log.times.slice(log.head);
      log.head = 0;
    }
    let count = log.times.length - log.head;
    const admitted = count < limit;
    if (admitted) {
      log.times.push(now);
      count++;
    }
    const oldest = log.times[log.head];
    return { admitted, remaining: Math.max(0, limit - count), resetMs: oldest === undefined ? WINDOW_MS : oldest + WINDOW_MS - now };
  }

  private sweep(): void {
    const cutoff = this.clock.now() - WINDOW_MS;
    for (const [key, log] of this.logs) {
      const newest = log.times[log.times.length - 1];
      if (newest === undefined || newest <= cutoff) this.logs.delete(key);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
