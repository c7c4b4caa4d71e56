import type { Redis } from '../db/redis.js';

/**
 * With Redis, a revoked key leaves a marker that the rate limiter's script checks in the same
 * round trip, so every process refuses the key from its next request on. The marker only has
 * to outlive the in-process key cache; after that the database says the key is revoked.
 */
const MARKER_TTL_SECONDS = 3600;

export function revocationMarker(prefix: string, keyId: string): string {
  return `${prefix}revoked:{key:${keyId}}`;
}

/**
 * How the other processes learn of a revocation: `marked` (the marker is in Redis: refused on
 * the next request everywhere), `unreachable` (Redis is down: each process refuses the key
 * when its key cache expires), `none` (no Redis: the database alone tells them).
 */
export type Propagation = 'marked' | 'unreachable' | 'none';

export async function markRevoked(redis: Redis | undefined, prefix: string, keyId: string): Promise<Propagation> {
  if (!redis) return 'none';
  try {
    if (!(await redis.whenReady(2000))) return 'unreachable';
    await redis.client.set(revocationMarker(prefix, keyId), '1', { EX: MARKER_TTL_SECONDS });
    return 'marked';
  } catch {
    return 'unreachable';
  }
}
