import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient } from '../db/redis.js';
import { WINDOW_MS, type HitOptions, type WindowResult, type WindowStore } from './window.js';

/**
 * One atomic round trip: drop what left the window, admit and record the request if there is
 * room, and report the oldest entry (when the next slot frees). A refused request is not
 * recorded. Time is Redis's own clock unless the caller passes one, so every server process
 * agrees on it. KEYS[2], when given, is a marker whose existence refuses the request outright.
 */
const SCRIPT = `
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then return {-1, 0, 0} end
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local admitted = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + 1
  admitted = 1
end
local reset = window
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
return {admitted, limit - count, reset}
`;
const SHA = createHash('sha1').update(SCRIPT).digest('hex');

export class RedisWindowStore implements WindowStore {
  /** Members must be unique across processes: two requests in the same millisecond are two entries. */
  private readonly tag = randomBytes(6).toString('hex');
  private seq = 0;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
  ) {}

  /** Hash tag `{key}` keeps a key's window and its markers in one cluster slot. */
  private windowKey(key: string): string {
    return `${this.prefix}rl:{${key}}`;
  }

  async hit(key: string, limit: number, options: HitOptions = {}): Promise<WindowResult> {
    const keys = [this.windowKey(key)];
    if (options.denyIfExists) keys.push(options.denyIfExists);
    const args = [String(limit), String(WINDOW_MS), options.now === undefined ? '' : String(options.now), `${this.tag}:${++this.seq}`];
    let reply: unknown;
    try {
      reply = await this.client.evalSha(SHA, { keys, arguments: args });
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
      reply = await this.client.eval(SCRIPT, { keys, arguments: args });
    }
    const [admitted, remaining, resetMs] = reply as [number, number, number];
    if (admitted === -1) return { admitted: false, remaining: 0, resetMs: 0, revoked: true };
    return { admitted: admitted === 1, remaining: Math.max(0, remaining), resetMs };
  }
}
