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

export async function markRevoked(redis: Redis | undefined, prefix: string, keyId: string): Promise<void> {
  if (!redis) return;
  await redis.client.set(revocationMarker(prefix, keyId), '1', { EX: MARKER_TTL_SECONDS });
}
