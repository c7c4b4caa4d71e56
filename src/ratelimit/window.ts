/** Every limit of this service is a sliding window of 60 seconds (docs/reference.md section 3). */
export const WINDOW_MS = 60_000;

export interface WindowResult {
  admitted: boolean;
  /** Requests still admitted in the current window, after this one. */
  remaining: number;
  /** Milliseconds until the oldest request leaves the window, that is until a slot frees. */
  resetMs: number;
  /** The Redis store found the key's revocation marker: refuse the request, count nothing. */
  revoked?: boolean;
}

export interface HitOptions {
  /** Time of the request; the Redis store uses its own clock when this is absent. */
  now?: number;
  /** A Redis key whose existence refuses the request (a revoked API key), checked in the same round trip. */
  denyIfExists?: string;
}

export interface WindowStore {
  /**
   * Admits and counts one request of `key` if fewer than `limit` were admitted in the last 60 s.
   * A store that holds its counts in this process's memory answers at once, not with a promise.
   */
  hit(key: string, limit: number, options: HitOptions): WindowResult | Promise<WindowResult>;
}
