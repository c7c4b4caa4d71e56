import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { undecodablePart } from './url-parts.js';

export type DatabaseConfig =
  | { client: 'sqlite'; filename: string }
  | { client: 'mysql'; url: string }
  | { client: 'postgres'; url: string };

/** The file the database lives in, when it is the embedded one on disk (not in memory, not a server). */
export function databaseFile(database: DatabaseConfig): string | undefined {
  return database.client === 'sqlite' && database.filename !== ':memory:' ? database.filename : undefined;
}

/** Every setting, read once by loadConfig(): its type is what that function returns. */
export type Config = ReturnType<typeof loadConfig>;

/** What one client connection may take of the server (node:http settings). */
export interface HttpLimits {
  /** The whole request, headers and body, must arrive within this. */
  readonly requestTimeoutMs: number;
  /** The headers must arrive within this. */
  readonly headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** Connections held at once by this process; more are closed as they arrive. */
  readonly maxConnections: number;
}

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}

/* Parsing of settings that name Redis nodes and sealing keys: other folders read them from here. */

/** `redis-cluster://[user:pass@]host:port[,host:port...]` (`rediss-cluster:` for TLS) names a cluster by some of its nodes. */
export const CLUSTER_URL = /^(rediss?)-cluster:\/\/(?:([^@/]*)@)?([^/@?#]+)\/?$/;

/** The seed nodes of a cluster URL, each as a plain node URL; undefined for a single node's URL. */
export function clusterNodes(url: string): { nodes: string[]; username?: string; password?: string; tls: boolean } | undefined {
  const match = CLUSTER_URL.exec(url);
  if (!match) return undefined;
  const [, scheme, credentials, hosts] = match;
  const [username, password] = (credentials ?? '').split(':').map((part) => decodeURIComponent(part));
  return {
    nodes: hosts!.split(',').map((host) => `${scheme}://${host.trim()}`),
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    tls: scheme === 'rediss',
  };
}

/** 32 bytes from base64, or undefined for anything else. */
export function decodeKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) return undefined;
  return Buffer.from(trimmed, 'base64');
}

/**
 * The checkout (or dist/ once built): the nearest folder above this module whose package.json
 * is this package's. Found, not counted in `..`s: the same file runs from src/common/, from
 * dist/src/common/ and bundled into build/admin-cli.mjs.
 */
export const ROOT_DIR = packageRoot(path.dirname(fileURLToPath(import.meta.url)));

function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      if ((JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string }).name === 'workspace-api') return dir;
    } catch {
      // No package.json here (or not one that parses): look further up.
    }
    if (path.dirname(dir) === dir) return path.resolve(from, '..', '..');
  }
}

const DEFAULT_RETRY_DELAYS = [5, 300, 1800, 7200, 18000, 36000, 36000];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/**
 * The parts of a server's URL that its driver decodes (user, password, path) must be
 * percent-encoded UTF-8: a password with a bare `%` stopped start-up with a URIError's stack.
 */
function checkEncoding(name: string, url: URL): void {
  const part = undecodablePart({ user: url.username, password: url.password, path: url.pathname });
  if (part) throw new ConfigError(name, `its ${part} is not percent-encoded UTF-8: write a % in it as %25 (and other reserved characters such as @ : / as %40 %3A %2F)`);
}

function parseDatabase(url: string): DatabaseConfig {
  if (url.startsWith('sqlite:')) {
    const filename = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (!filename) throw new ConfigError('DATABASE_URL', 'a sqlite URL needs a file, as in sqlite:./data/workspace.db');
    return { client: 'sqlite', filename: filename === ':memory:' ? filename : path.resolve(filename) };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('DATABASE_URL', 'is not a URL (expected sqlite:FILE, mysql://user:pass@host:3306/db or postgres://user:pass@host:5432/db)');
  }
  checkEncoding('DATABASE_URL', parsed);
  if (parsed.protocol === 'postgres:' || parsed.protocol === 'postgresql:') {
    if (parsed.pathname.length <= 1) throw new ConfigError('DATABASE_URL', 'a postgres URL must name a database, as in postgres://postgres@127.0.0.1:5432/test');
    return { client: 'postgres', url };
  }
  if (parsed.protocol !== 'mysql:') {
    throw new ConfigError('DATABASE_URL', `unsupported scheme "${parsed.protocol}" (expected sqlite:, mysql: or postgres:)`);
  }
  if (parsed.pathname.length <= 1) throw new ConfigError('DATABASE_URL', 'a mysql URL must name a database, as in mysql://root@127.0.0.1:3306/test');
  return { client: 'mysql', url };
}

function parseRedisUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (/^rediss?-cluster:/.test(raw)) {
    const credentials = CLUSTER_URL.exec(raw)?.[2];
    if (credentials) checkEncoding('REDIS_URL', new URL(`redis://${credentials}@host`));
    const nodes = clusterNodes(raw)?.nodes ?? [];
    if (nodes.length === 0 || nodes.some((node) => !/^rediss?:\/\/[^\s:/]+:\d{1,5}$/.test(node))) {
      throw new ConfigError('REDIS_URL', 'a cluster URL lists nodes as host:port, as in redis-cluster://10.0.0.1:7000,10.0.0.2:7000');
    }
    return raw;
  }
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError('REDIS_URL', 'is not a URL (expected redis://host:6379, or redis-cluster://host:port,host:port for a cluster)');
  }
  checkEncoding('REDIS_URL', parsed);
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ConfigError('REDIS_URL', `unsupported scheme "${parsed.protocol}" (expected redis:, rediss:, or redis-cluster: for a cluster)`);
  }
  return raw;
}

function parseRetryDelays(raw: string | undefined): number[] {
  if (raw === undefined || raw === '') return DEFAULT_RETRY_DELAYS;
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) {
    throw new ConfigError('WEBHOOK_RETRY_DELAYS', `must be a comma-separated list of seconds, got "${raw}"`);
  }
  return parts.map(Number);
}

function parseDnsServers(raw: string | undefined): string[] {
  if (raw === undefined || raw === '') return [];
  const servers = raw.split(',').map((s) => s.trim());
  for (const server of servers) {
    if (!/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\])(:\d{1,5})?$/.test(server)) {
      throw new ConfigError('WEBHOOK_DNS_SERVERS', `must be a comma-separated list of IP addresses with optional ports, got "${server}"`);
    }
  }
  return servers;
}

function parseOrigins(raw: string | undefined): string[] {
  if (raw === undefined || raw === '') return [];
  return raw.split(',').map((part) => {
    const value = part.trim();
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== value) {
      throw new ConfigError('ADMIN_ORIGINS', `must be a comma-separated list of origins such as https://admin.example.com (scheme and host, no path), got "${value}"`);
    }
    return value;
  });
}

function parseSecretKeys(raw: string | undefined, database: DatabaseConfig): readonly Buffer[] | undefined {
  if (raw === undefined || raw.trim() === '') {
    if (database.client !== 'sqlite') {
      throw new ConfigError('SECRET_KEYS', `is required with a ${database.client === 'mysql' ? 'MySQL' : 'PostgreSQL'} DATABASE_URL: webhook secrets are stored encrypted under it. Make a key with \`openssl rand -base64 32\`, set SECRET_KEYS to it, and keep it apart from the database and its backups`);
    }
    return undefined;
  }
  const keys = raw.split(',').map((part, i) => {
    const key = decodeKey(part);
    if (!key) throw new ConfigError('SECRET_KEYS', `must be a comma-separated list of base64 32-byte keys, newest first (as \`openssl rand -base64 32\` prints); key ${i + 1} is not one`);
    return key;
  });
  return Object.freeze(keys);
}

/** How long events are kept unless RETENTION_DAYS says otherwise. */
export const DEFAULT_RETENTION_DAYS = 30;
export const DAY_MS = 24 * 3600 * 1000;

/** Reads every setting once; the result is frozen and passed down, never re-read. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/workspace.db';
  const pluginsDir = path.resolve(env.PLUGINS_DIR || path.join(ROOT_DIR, 'plugins'));
  const migrationsDirs = [path.join(ROOT_DIR, 'migrations')];
  if (env.MIGRATIONS_DIR) migrationsDirs.push(path.resolve(env.MIGRATIONS_DIR));
  const logLevel = oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS);
  const redisPrefix = env.REDIS_PREFIX ?? 'wsapi:';
  if (!/^[A-Za-z0-9:_.-]*$/.test(redisPrefix)) throw new ConfigError('REDIS_PREFIX', 'may hold only letters, digits and : _ . -');

  const webhookTimeoutMs = integer(env, 'WEBHOOK_TIMEOUT_SECONDS', 10, 1, 60) * 1000;
  const webhookLeaseMs = integer(env, 'WEBHOOK_LEASE_SECONDS', 60, 2, 3600) * 1000;
  // A claim must outlive the attempt it covers, or a slow attempt could be claimed twice.
  if (webhookLeaseMs < 2 * webhookTimeoutMs) throw new ConfigError('WEBHOOK_LEASE_SECONDS', `must be at least twice WEBHOOK_TIMEOUT_SECONDS (${webhookTimeoutMs / 500})`);

  const requestTimeoutMs = integer(env, 'HTTP_REQUEST_TIMEOUT_SECONDS', 30, 1, 3600) * 1000;
  const headersTimeoutMs = integer(env, 'HTTP_HEADERS_TIMEOUT_SECONDS', 10, 1, 3600) * 1000;
  if (headersTimeoutMs > requestTimeoutMs) throw new ConfigError('HTTP_HEADERS_TIMEOUT_SECONDS', `must not exceed HTTP_REQUEST_TIMEOUT_SECONDS (${requestTimeoutMs / 1000})`);
  const http: HttpLimits = Object.freeze({
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'HTTP_KEEPALIVE_TIMEOUT_SECONDS', 5, 1, 3600) * 1000,
    maxConnections: integer(env, 'HTTP_MAX_CONNECTIONS', 1000, 1, 1_000_000),
  });

  const database = Object.freeze(parseDatabase(databaseUrl));
  const redisUrl = parseRedisUrl(env.REDIS_URL);
  const webConcurrency = integer(env, 'WEB_CONCURRENCY', 1, 1, 64);
  if (webConcurrency > 1 && redisUrl === undefined) throw new ConfigError('WEB_CONCURRENCY', 'needs REDIS_URL: several processes on one port must share their rate limits (set REDIS_URL, or leave WEB_CONCURRENCY at 1)');
  return Object.freeze({
    http,
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: env.HOST || '127.0.0.1',
    database,
    /** Seed a demo workspace into an empty database (DEMO; by default only on the embedded default). */
    demo: boolean(env, 'DEMO', database.client === 'sqlite'),
    redisUrl,
    /** Server processes on one port (WEB_CONCURRENCY, node:cluster); above 1 only with Redis. */
    webConcurrency,
    /** Prefix of every Redis key this service writes, so several deployments can share one Redis. */
    redisPrefix,
    worker: oneOf(env, 'WORKER', 'inline', ['inline', 'off'] as const),
    webhookAllowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    webhookRetryDelays: Object.freeze(parseRetryDelays(env.WEBHOOK_RETRY_DELAYS)),
    /** Per-attempt limit of a delivery: a 2xx must arrive within it (10 s in the contract). */
    webhookTimeoutMs,
    /** How long a worker holds the deliveries it claimed; a crashed worker's claims return after it. */
    webhookLeaseMs,
    /** Attempts a worker keeps in flight at once. */
    webhookConcurrency: integer(env, 'WEBHOOK_CONCURRENCY', 50, 1, 1000),
    /** DNS servers (host or host:port) that resolve webhook hosts; empty: the system resolver. */
    webhookDnsServers: Object.freeze(parseDnsServers(env.WEBHOOK_DNS_SERVERS)),
    logLevel,
    pluginsDir,
    migrationsDirs: Object.freeze(migrationsDirs),
    /** Failed authentications admitted per client address and minute before 429. */
    authFailureLimit: integer(env, 'AUTH_FAILURE_LIMIT', 30, 1, 100000),
    /** Honour X-Forwarded-For for the client address (only behind a trusted proxy). */
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    /** How many proxies in front append to X-Forwarded-For: the client's address is the entry the farthest of them appended, counted from the end. */
    trustProxyHops: integer(env, 'TRUST_PROXY_HOPS', 1, 1, 10),
    /** The session cookie gets `Secure` (set it when the service is reached over https). */
    cookieSecure: boolean(env, 'COOKIE_SECURE', false),
    /** Origins, beyond the service's own, whose pages may change things through the internal API. */
    adminOrigins: Object.freeze(parseOrigins(env.ADMIN_ORIGINS)),
    /** How often each server writes the usage it counted (the most a killed process loses). */
    usageFlushMs: integer(env, 'USAGE_FLUSH_SECONDS', 5, 1, 300) * 1000,
    /** Whether each key's requests are logged (REQUEST_LOG, default true; docs/reference.md section 15), kept as long as events. */
    requestLog: boolean(env, 'REQUEST_LOG', true),
    /** How long events, their deliveries and attempts are kept (RETENTION_DAYS, default 30). */
    retentionMs: integer(env, 'RETENTION_DAYS', DEFAULT_RETENTION_DAYS, 1, 3650) * DAY_MS,
    /**
     * The keys webhook secrets are sealed under (SECRET_KEYS, newest first); undefined on the
     * embedded default without it: the key file in the data folder is used (secrets/load.ts).
     */
    secretKeys: parseSecretKeys(env.SECRET_KEYS, database),
    /** Where this process serves its Prometheus metrics (METRICS_PORT, METRICS_HOST); undefined: not at all. */
    metrics: env.METRICS_PORT ? Object.freeze({ port: integer(env, 'METRICS_PORT', 0, 0, 65535), host: env.METRICS_HOST || '127.0.0.1' }) : undefined,
  });
}
