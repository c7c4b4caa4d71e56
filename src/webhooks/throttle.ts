import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { transaction } from '../db/dialects/index.js';
import type { Redis } from '../db/redis.js';
import { deferClaimed, type Job } from './claim.js';

/**
 * A subscription's bucket holds at most this share of a second's deliveries (at least one):
 * the burst it allows above its rate. With 5 per second, any one second sees at most 5 + 1.
 */
export const BURST_SECONDS = 0.1;

export const burstOf = (rate: number) => Math.max(1, Math.floor(rate * BURST_SECONDS));

/** What a bucket gave: `granted` tokens now, and when each of the rest will be there. */
export interface Grant {
  granted: number;
  /** For the i-th token not granted (0-based): ms from now until it is there. */
  waitMs: (i: number) => number;
}

/** The bucket's arithmetic, shared by Redis (in Lua, below) and the database. */
export function takeTokens(state: { tokens: number; refilledAt: number } | undefined, rate: number, want: number, now: number): { tokens: number; granted: number } {
  const capacity = burstOf(rate);
  const tokens = state === undefined ? capacity : Math.min(capacity, state.tokens + (Math.max(0, now - state.refilledAt) * rate) / 1000);
  const granted = Math.min(want, Math.floor(tokens));
  return { tokens: tokens - granted, granted };
}

function grantOf(granted: number, left: number, rate: number): Grant {
  // The next token is there when the bucket's fraction reaches 1, and one more every 1/rate s.
  return { granted, waitMs: (i) => Math.ceil(((1 - left + i) * 1000) / rate) };
}

const SCRIPT = `
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local rate = tonumber(ARGV[1])
local want = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local capacity = tonumber(ARGV[4])
local tokens = capacity
if state[1] then
  tokens = math.min(capacity, tonumber(state[1]) + math.max(0, now - tonumber(state[2])) * rate / 1000)
end
local granted = math.min(want, math.floor(tokens))
tokens = tokens - granted
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], 60000)
return { granted, tostring(tokens) }
`;

/**
 * Token buckets per subscription, shared by every worker: in Redis when it is up (one script,
 * atomic), else in the database (one row per subscription, taken under a row lock).
 */
export class Throttle {
  constructor(
    private readonly db: Knex,
    private readonly redis: Redis | undefined,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  async take(subscriptionId: string, rate: number, want: number, now: number): Promise<Grant> {
    if (this.redis?.isReady()) {
      try {
        const reply = (await this.redis.client.eval(SCRIPT, { keys: [`${this.prefix}throttle:${subscriptionId}`], arguments: [String(rate), String(want), String(now), String(burstOf(rate))] })) as [number, string];
        return grantOf(Number(reply[0]), Number(reply[1]), rate);
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'throttle: Redis failed, using the database');
      }
    }
    return this.takeFromDatabase(subscriptionId, rate, want, now);
  }

  /**
   * The claimed jobs that may go now: all of a subscription without a limit; of one with
   * max_deliveries_per_second, as many as its bucket grants. The rest are handed back, each due
   * when its token will be there, so they wait without holding a slot other subscriptions need.
   */
  async admit(jobs: readonly Job[], now: () => number): Promise<Job[]> {
    const limited = new Map<string, Job[]>();
    const admitted: Job[] = [];
    for (const job of jobs) {
      if (job.maxPerSecond === null) admitted.push(job);
      else limited.set(job.delivery.subscription_id, [...(limited.get(job.delivery.subscription_id) ?? []), job]);
    }
    const deferred: Array<{ id: string; leaseOwner: string; at: number }> = [];
    for (const [subscription, group] of limited) {
      const rate = group[0]!.maxPerSecond!;
      const at = now();
      const grant = await this.take(subscription, rate, group.length, at);
      admitted.push(...group.slice(0, grant.granted));
      group.slice(grant.granted).forEach((job, i) => deferred.push({ id: job.delivery.id, leaseOwner: job.delivery.lease_owner ?? '', at: at + grant.waitMs(i) }));
    }
    await deferClaimed(this.db, deferred);
    return admitted;
  }

  private takeFromDatabase(subscriptionId: string, rate: number, want: number, now: number): Promise<Grant> {
    return transaction(this.db, async (trx) => {
      const row = (await trx('webhook_throttle').first('tokens', 'refilled_at').where({ subscription_id: subscriptionId }).forUpdate()) as { tokens: number | string; refilled_at: number | string } | undefined;
      const { tokens, granted } = takeTokens(row ? { tokens: Number(row.tokens), refilledAt: Number(row.refilled_at) } : undefined, rate, want, now);
      if (row) await trx('webhook_throttle').update({ tokens, refilled_at: now }).where({ subscription_id: subscriptionId });
      else await trx('webhook_throttle').insert({ subscription_id: subscriptionId, tokens, refilled_at: now }).onConflict('subscription_id').merge();
      return grantOf(granted, tokens, rate);
    });
  }
}
