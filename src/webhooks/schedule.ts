/** The retry schedule (docs/reference.md section 8): the configured delays with ±20% jitter. */
export function retryDelayMs(delaysSeconds: readonly number[], failedAttempts: number, random: () => number = Math.random): number {
  const base = delaysSeconds[Math.min(Math.max(failedAttempts - 1, 0), delaysSeconds.length - 1)] ?? 0;
  return Math.round(base * 1000 * (0.8 + 0.4 * random()));
}

const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/** A receiver's Retry-After (seconds or an HTTP date) in milliseconds from now, at most a day. */
export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  if (!header) return undefined;
  const value = header.trim();
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}
