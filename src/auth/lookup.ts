import { LRUCache } from 'lru-cache';
import type { Knex } from 'knex';
import { asNumber } from '../db/decode.js';
import { args, param, prepare, type Prepared } from '../db/prepared.js';
import type { Reads } from '../db/reads.js';
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.js';
import type { AuthContext } from '../common/who.js';
import { effectiveScopes, type ApiAccess } from './plans.js';
import { hashToken } from './tokens.js';
import { allowlist } from './allowlist.js';

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  scopes: string;
  rate_limit: number;
  api_version: string;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
  allowed_ips: string | null;
  workspace_id: string;
  workspace_name: string;
  plan: string;
  api_access: ApiAccess;
}

interface Entry {
  auth: AuthContext | null;
  expires: number;
  version: number | undefined;
}

const MAX_ENTRIES = 10_000;
/** last_used_at is a hint for operators: one write a minute per key is plenty. */
const LAST_USED_EVERY_MS = 60_000;

/** How long a process keeps a looked-up key on MySQL: the longest a revocation waits without Redis. */
export const KEY_CACHE_MS = 1000;

/** On SQLite, where a revocation or plan change ends the entry at once (auth_changes), the TTL only bounds memory of idle keys. */
export const KEY_CACHE_SQLITE_MS = 60_000;

/**
 * How long a looked-up key may be kept: `ttlMs`, and, where the database can tell cheaply that
 * something changed (SQLite: the auth_changes counter), only while `version()` stays the same.
 */
export interface KeyCachePolicy {
  ttlMs: number;
  version?: () => number;
}

/**
 * Token -> key, workspace and plan, cached in process so the hot path costs no query. A
 * revocation reaches every process within the TTL (at once with Redis: see revocation.ts), and
 * at once on SQLite, where a revocation or plan change committed by any process ends every entry.
 */
export class KeyLookup {
  private readonly cache = new LRUCache<string, Entry>({ max: MAX_ENTRIES });
  /** The lookup, compiled once and run by the driver (db/reads.ts): each process makes one per key and TTL. */
  private readonly statement: Prepared;

  constructor(
    private readonly db: Knex,
    private readonly reads: Reads,
    private readonly clock: Clock,
    private readonly policy: KeyCachePolicy,
    private readonly log: Logger,
  ) {
    this.statement = prepare(
      db('api_keys as k')
        .join('workspaces as w', 'w.id', 'k.workspace_id')
        .join('plans as p', 'p.name', 'w.plan')
        .select('k.id', 'k.name', 'k.prefix', 'k.scopes', 'k.rate_limit', 'k.api_version', 'k.last_used_at', 'k.expires_at', 'k.revoked_at', 'k.allowed_ips', 'w.id as workspace_id', 'w.name as workspace_name', 'w.plan', 'p.api_access')
        .where('k.token_hash', param('hash'))
        // A rolled key is revoked ahead of time: it works until then.
        .andWhere((q) => q.whereNull('k.revoked_at').orWhere('k.revoked_at', '>', param('now'))),
    );
  }

  /** Whether the key has expired by now (a cached key expires on time: the check is per request). */
  expired(auth: AuthContext): boolean {
    return auth.key.expires_at !== null && auth.key.expires_at <= this.clock.now();
  }

  /** Whether a rolled key's overlap has ended: from then on it is refused like a revoked one. */
  ended(auth: AuthContext): boolean {
    return auth.key.revokes_at !== null && auth.key.revokes_at <= this.clock.now();
  }

  /**
   * The answer kept for this token while it is fresh (null: known not to be a key), undefined
   * when it must be looked up. The cache is keyed by the token itself, not its hash: hashing on
   * every request cost as much as the rest of authentication, and the token is in this process's
   * memory for its request anyway; an entry lives at most the TTL. Only a token that passed its
   * checksum is ever looked up, so only such tokens are kept.
   */
  cached(token: string): AuthContext | null | undefined {
    const entry = this.cache.get(token);
    return entry && entry.expires > this.clock.now() && entry.version === this.policy.version?.() ? entry.auth : undefined;
  }

  /**
   * The id of the key this process last knew the token as, however stale: for the request log
   * alone, when a lookup could not be made (the database away). Never to authenticate with.
   */
  lastKnown(token: string): string | undefined {
    return this.cache.get(token)?.auth?.key.id;
  }

  /** Looks the token up and keeps the answer; the caller asked cached() first. */
  async find(token: string): Promise<AuthContext | null> {
    const now = this.clock.now();
    // Read before the lookup: a change committed during it makes the entry stale at once.
    const version = this.policy.version?.();
    const auth = await this.load(hashToken(token), now);
    if (this.policy.ttlMs > 0) {
      this.cache.set(token, { auth, expires: now + this.policy.ttlMs, version });
    }
    return auth;
  }

  private async load(hash: string, now: number): Promise<AuthContext | null> {
    const [row] = (await this.reads.all(this.statement.sql, args(this.statement, { hash, now }))) as unknown as KeyRow[];
    if (!row || row.api_access === 'none') return null;
    if (row.last_used_at == null || now - asNumber(row.last_used_at) > LAST_USED_EVERY_MS) {
      this.db('api_keys')
        .update({ last_used_at: now })
        .where('id', row.id)
        .catch((err: unknown) => this.log.warn({ err, key: row.id }, 'could not record last_used_at'));
    }
    const scopes = JSON.parse(row.scopes) as string[];
    return {
      key: { id: row.id, name: row.name, prefix: row.prefix, scopes, rate_limit: asNumber(row.rate_limit), api_version: row.api_version, expires_at: row.expires_at == null ? null : asNumber(row.expires_at), revokes_at: row.revoked_at == null ? null : asNumber(row.revoked_at) },
      workspace: { id: row.workspace_id, name: row.workspace_name, plan: row.plan },
      scopes: new Set(effectiveScopes(scopes, row.api_access)),
      // Compiled once per lookup, and kept with the cached key.
      allows: row.allowed_ips == null ? null : allowlist(JSON.parse(row.allowed_ips) as string[]),
    };
  }
}
