/** Who is calling: the key, its workspace, and the scopes it may use now. */
export interface AuthContext {
  key: { id: string; name: string; prefix: string; scopes: string[]; rate_limit: number };
  workspace: { id: string; name: string; plan: string };
  /** The key's scopes that its workspace's plan allows now. */
  scopes: ReadonlySet<string>;
}

/** The key's rate-limit window after this request. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the next slot frees. */
  reset: number;
}
