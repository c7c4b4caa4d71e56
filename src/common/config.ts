import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { booleanSetting, choiceSetting, ConfigError, customSetting, integerSetting } from './settings.js';
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

export { ConfigError } from './settings.js';

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

/** The service's version, as package.json has it (the OpenAPI documents' info.version, the traces' service.version). */
export function serviceVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { version: string }).version;
}

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
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

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

function parseSecretKeys(raw: string | undefined): readonly Buffer[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
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

const seconds = (name: string, fallback: number, min: number, max: number, meaning: string) => integerSetting(name, fallback, min, max, meaning);

/** OTEL_TRACES_SAMPLER's values, as the OpenTelemetry specification names them. */
export const TRACE_SAMPLERS = ['parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio', 'always_on', 'always_off', 'traceidratio'] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

/** A collector's base URL: http or https, nothing else. */
function parseOtlpEndpoint(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('OTEL_EXPORTER_OTLP_ENDPOINT', `must be a URL (http://collector:4318), got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('OTEL_EXPORTER_OTLP_ENDPOINT', `must be an http or https URL (OTLP over HTTP), got "${url.protocol}"`);
  return raw;
}

/** Every setting, in the order the operator's guide lists them (settings.ts; `npm run docs:settings` writes the table). */
export const SETTINGS = {
  port: integerSetting('PORT', 3000, 0, 65535, 'where the API listens'),
  host: customSetting('HOST', '`127.0.0.1`', 'the address the API listens on', (raw) => raw || '127.0.0.1'),
  database: customSetting(
    'DATABASE_URL',
    '`sqlite:./data/workspace.db`',
    'or `mysql://user:pass@host:3306/db` (MySQL 8 / MariaDB 10.11), or `postgres://user:pass@host:5432/db` (PostgreSQL 13+; `postgresql://` too)',
    (raw) => Object.freeze(parseDatabase(raw || 'sqlite:./data/workspace.db')),
  ),
  secretKeys: customSetting(
    'SECRET_KEYS',
    'unset: the key file `secret.key` beside the SQLite database',
    'base64 32-byte keys, newest first (`openssl rand -base64 32`), that webhook secrets are encrypted under; **required with MySQL or PostgreSQL** (start-up refuses without it)',
    (raw) => parseSecretKeys(raw),
  ),
  redisUrl: customSetting(
    'REDIS_URL',
    'unset: limits in process memory',
    '`redis://host:6379` (`rediss://` for TLS, `redis://user:pass@host:6379` with credentials); needed to share limits across processes. A **Redis Cluster**: `redis-cluster://[user:pass@]host:port,host:port,...` (`rediss-cluster://` for TLS) naming some of its nodes; the rest are discovered',
    parseRedisUrl,
  ),
  redisPrefix: customSetting('REDIS_PREFIX', '`wsapi:`', 'prefix of every Redis key, so deployments can share a Redis', (raw) => {
    const prefix = raw ?? 'wsapi:';
    if (!/^[A-Za-z0-9:_.-]*$/.test(prefix)) throw new ConfigError('REDIS_PREFIX', 'may hold only letters, digits and : _ . -');
    return prefix;
  }),
  worker: choiceSetting('WORKER', 'inline', ['inline', 'off'], '`inline`: `npm start` also runs a delivery worker; `off`: API only'),
  authFailureLimit: integerSetting('AUTH_FAILURE_LIMIT', 30, 1, 100000, 'failed authentications per client address and minute'),
  trustProxy: booleanSetting(
    'TRUST_PROXY',
    false,
    "take the client address from `X-Forwarded-For` (only behind your proxy): the entry your proxy appended, never one the client wrote before it; an entry that is not an address counts as the socket's",
  ),
  trustProxyHops: integerSetting(
    'TRUST_PROXY_HOPS',
    1,
    1,
    10,
    'with `TRUST_PROXY`, how many proxies in front append to `X-Forwarded-For` (a CDN and a load balancer: `2`); the address is the entry the farthest of them appended, counted from the end',
  ),
  cookieSecure: booleanSetting(
    'COOKIE_SECURE',
    false,
    "always mark the administration area's session cookie `Secure` (it is already whenever the request came over https: a TLS connection, or `X-Forwarded-Proto: https` with `TRUST_PROXY=true`)",
  ),
  adminOrigins: customSetting('ADMIN_ORIGINS', 'unset', 'further origins (`https://admin.example.com,...`) whose pages may change things through `/internal/v1`', (raw) => Object.freeze(parseOrigins(raw))),
  usageFlushSeconds: seconds('USAGE_FLUSH_SECONDS', 5, 1, 300, 'how often each server writes the usage it counted per key (the most a killed process loses)'),
  metricsPort: customSetting(
    'METRICS_PORT',
    'unset: none',
    "serve this process's Prometheus metrics on `GET /metrics` at this port (each server and worker process its own port)",
    (raw) => (raw ? integerSetting('METRICS_PORT', 0, 0, 65535, '').read(raw) : undefined),
  ),
  metricsHost: customSetting('METRICS_HOST', '`127.0.0.1`', 'the address the metrics listen on (`0.0.0.0` to let a Prometheus elsewhere scrape them)', (raw) => raw || '127.0.0.1'),
  webConcurrency: integerSetting(
    'WEB_CONCURRENCY',
    1,
    1,
    64,
    'server processes sharing the port (node:cluster); above 1 only with `REDIS_URL`, so the rate limits stay shared (refused at start-up otherwise). The first process migrates and seeds; each one runs its own inline worker, and serves its metrics on `METRICS_PORT` + its index',
  ),
  demo: booleanSetting('DEMO', undefined, 'seed a demo workspace (full-scope key, sample rows, demo admin) into an empty database', '`true` on the embedded default, else `false`'),
  retentionDays: integerSetting(
    'RETENTION_DAYS',
    DEFAULT_RETENTION_DAYS,
    1,
    3650,
    "how long events are kept (the event log, recovery), with their deliveries and attempts, and the keys' request logs; then swept by the housekeeping of each server and worker",
  ),
  requestLog: booleanSetting(
    'REQUEST_LOG',
    true,
    "whether each server logs every request made with a key (the key's request log); `false` turns it off (on SQLite the log costs writes about a seventh of their throughput, on MySQL and PostgreSQL nothing measurable: see `bench/HISTORY.md`)",
  ),
  logLevel: choiceSetting(
    'LOG_LEVEL',
    'info',
    LOG_LEVELS,
    "pino level; `silent` to mute; `warn` drops the access log's line a request (each key's requests stay in its request log): on MariaDB that saved 15 microseconds of the server's CPU a POST, 7% more writes a second (see `bench/HISTORY.md`)",
  ),
  webhookAllowPrivate: booleanSetting('WEBHOOK_ALLOW_PRIVATE', false, '`true` allows `http` and private addresses (development only)'),
  webhookRetryDelays: customSetting('WEBHOOK_RETRY_DELAYS', `\`${DEFAULT_RETRY_DELAYS.join(',')}\``, 'seconds between attempts (the count sets the retries)', (raw) => Object.freeze(parseRetryDelays(raw))),
  webhookTimeoutSeconds: seconds('WEBHOOK_TIMEOUT_SECONDS', 10, 1, 60, 'per attempt'),
  webhookLeaseSeconds: seconds('WEBHOOK_LEASE_SECONDS', 60, 2, 3600, 'how long a worker holds what it claimed; at least twice the timeout'),
  webhookConcurrency: integerSetting('WEBHOOK_CONCURRENCY', 50, 1, 1000, 'attempts in flight per worker'),
  webhookDnsServers: customSetting('WEBHOOK_DNS_SERVERS', 'system resolver', '`ip[:port],...` to resolve webhook hosts with those servers only', (raw) => Object.freeze(parseDnsServers(raw))),
  pluginsDir: customSetting('PLUGINS_DIR', '`./plugins`', 'where resource plugins are loaded from', (raw) => path.resolve(raw || path.join(ROOT_DIR, 'plugins'))),
  migrationsDir: customSetting('MIGRATIONS_DIR', 'unset', 'a further migrations folder, run beside `./migrations` in file-name order', (raw) => (raw ? path.resolve(raw) : undefined)),
  httpRequestTimeoutSeconds: seconds('HTTP_REQUEST_TIMEOUT_SECONDS', 30, 1, 3600, 'a request (headers and body) must arrive within this, else `408` and the connection closes'),
  httpHeadersTimeoutSeconds: seconds(
    'HTTP_HEADERS_TIMEOUT_SECONDS',
    10,
    1,
    3600,
    "a request's headers must arrive within this, the first request's counted from connect however slowly bytes trickle in (at most the request timeout); past it, 408 and the connection is closed",
  ),
  httpKeepAliveTimeoutSeconds: seconds('HTTP_KEEPALIVE_TIMEOUT_SECONDS', 5, 1, 3600, "an idle keep-alive connection is closed after this; behind a load balancer, set it above the balancer's idle timeout"),
  httpMaxConnections: integerSetting(
    'HTTP_MAX_CONNECTIONS',
    1000,
    1,
    1_000_000,
    'connections one process holds at once; at the cap a new connection takes the place of the one idle longest (waiting for its first headers, or kept alive between requests), and only when every connection is busy with a request is it closed as it arrives (logged at most every 10 s)',
  ),
  // Traces (docs/operator.md, Traces): the OpenTelemetry SDK's own variables, read here so that a bad value stops start-up with one line.
  otelEndpoint: customSetting(
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'unset: no traces, nothing of the SDK loaded',
    "an OTLP/HTTP collector's base URL (`http://collector:4318`): the server and workers export their traces there (`/v1/traces`)",
    (raw) => (raw ? parseOtlpEndpoint(raw) : undefined),
  ),
  otelProtocol: choiceSetting('OTEL_EXPORTER_OTLP_PROTOCOL', 'http/protobuf', ['http/protobuf', 'http/json'], 'how spans are sent to the collector (OTLP over HTTP; gRPC is not offered)'),
  otelServiceName: customSetting('OTEL_SERVICE_NAME', '`workspace-api` (`workspace-api-worker` for `npm run worker`)', "the traces' `service.name`", (raw) => raw || undefined),
  otelSampler: choiceSetting('OTEL_TRACES_SAMPLER', 'parentbased_always_on', TRACE_SAMPLERS, "which requests are traced; `parentbased_*` follow an incoming `traceparent`'s decision"),
  otelSamplerArg: customSetting('OTEL_TRACES_SAMPLER_ARG', '`1`', 'the share of traces kept by the `*traceidratio` samplers, from `0` to `1` (`0.1`: one in ten)', (raw) => {
    if (!raw) return 1;
    const ratio = Number(raw);
    if (!/^\d*\.?\d+$/.test(raw) || ratio > 1) throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1, got "${raw}"`);
    return ratio;
  }),
} as const;

/** Each setting's value as its declaration reads it. */
export type SettingValues = { [K in keyof typeof SETTINGS]: ReturnType<(typeof SETTINGS)[K]['read']> };

/** Every setting read from `env`, each by its declaration, in order (the first refusal stops). */
export function readSettings(env: NodeJS.ProcessEnv): SettingValues {
  return Object.fromEntries(Object.entries(SETTINGS).map(([key, setting]) => [key, setting.read(env[setting.name])])) as SettingValues;
}

/** The checks between settings: one that needs another, or must stay within another. */
function checkTogether(s: SettingValues): void {
  // A claim must outlive the attempt it covers, or a slow attempt could be claimed twice.
  if (s.webhookLeaseSeconds < 2 * s.webhookTimeoutSeconds) throw new ConfigError('WEBHOOK_LEASE_SECONDS', `must be at least twice WEBHOOK_TIMEOUT_SECONDS (${s.webhookTimeoutSeconds * 2})`);
  if (s.httpHeadersTimeoutSeconds > s.httpRequestTimeoutSeconds) throw new ConfigError('HTTP_HEADERS_TIMEOUT_SECONDS', `must not exceed HTTP_REQUEST_TIMEOUT_SECONDS (${s.httpRequestTimeoutSeconds})`);
  if (s.webConcurrency > 1 && s.redisUrl === undefined) throw new ConfigError('WEB_CONCURRENCY', 'needs REDIS_URL: several processes on one port must share their rate limits (set REDIS_URL, or leave WEB_CONCURRENCY at 1)');
  if (s.secretKeys === undefined && s.database.client !== 'sqlite') {
    throw new ConfigError('SECRET_KEYS', `is required with a ${s.database.client === 'mysql' ? 'MySQL' : 'PostgreSQL'} DATABASE_URL: webhook secrets are stored encrypted under it. Make a key with \`openssl rand -base64 32\`, set SECRET_KEYS to it, and keep it apart from the database and its backups`);
  }
}

/** Reads every setting once; the result is frozen and passed down, never re-read. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const s = readSettings(env);
  checkTogether(s);
  const http: HttpLimits = Object.freeze({
    requestTimeoutMs: s.httpRequestTimeoutSeconds * 1000,
    headersTimeoutMs: s.httpHeadersTimeoutSeconds * 1000,
    keepAliveTimeoutMs: s.httpKeepAliveTimeoutSeconds * 1000,
    maxConnections: s.httpMaxConnections,
  });
  return Object.freeze({
    http,
    port: s.port,
    host: s.host,
    database: s.database,
    /** Seed a demo workspace into an empty database (DEMO; by default only on the embedded default). */
    demo: s.demo ?? s.database.client === 'sqlite',
    redisUrl: s.redisUrl,
    /** Server processes on one port (WEB_CONCURRENCY, node:cluster); above 1 only with Redis. */
    webConcurrency: s.webConcurrency,
    /** Prefix of every Redis key this service writes, so several deployments can share one Redis. */
    redisPrefix: s.redisPrefix,
    worker: s.worker,
    webhookAllowPrivate: s.webhookAllowPrivate === true,
    webhookRetryDelays: s.webhookRetryDelays,
    /** Per-attempt limit of a delivery: a 2xx must arrive within it (10 s in the contract). */
    webhookTimeoutMs: s.webhookTimeoutSeconds * 1000,
    /** How long a worker holds the deliveries it claimed; a crashed worker's claims return after it. */
    webhookLeaseMs: s.webhookLeaseSeconds * 1000,
    /** Attempts a worker keeps in flight at once. */
    webhookConcurrency: s.webhookConcurrency,
    /** DNS servers (host or host:port) that resolve webhook hosts; empty: the system resolver. */
    webhookDnsServers: s.webhookDnsServers,
    logLevel: s.logLevel,
    pluginsDir: s.pluginsDir,
    migrationsDirs: Object.freeze([path.join(ROOT_DIR, 'migrations'), ...(s.migrationsDir !== undefined ? [s.migrationsDir] : [])]),
    /** Failed authentications admitted per client address and minute before 429. */
    authFailureLimit: s.authFailureLimit,
    /** Honour X-Forwarded-For for the client address (only behind a trusted proxy). */
    trustProxy: s.trustProxy === true,
    /** How many proxies in front append to X-Forwarded-For: the client's address is the entry the farthest of them appended, counted from the end. */
    trustProxyHops: s.trustProxyHops,
    /** The session cookie gets `Secure` (set it when the service is reached over https). */
    cookieSecure: s.cookieSecure === true,
    /** Origins, beyond the service's own, whose pages may change things through the internal API. */
    adminOrigins: s.adminOrigins,
    /** How often each server writes the usage it counted (the most a killed process loses). */
    usageFlushMs: s.usageFlushSeconds * 1000,
    /** Whether each key's requests are logged (REQUEST_LOG, default true; docs/reference.md section 15), kept as long as events. */
    requestLog: s.requestLog !== false,
    /** How long events, their deliveries and attempts are kept (RETENTION_DAYS, default 30). */
    retentionMs: s.retentionDays * DAY_MS,
    /**
     * The keys webhook secrets are sealed under (SECRET_KEYS, newest first); undefined on the
     * embedded default without it: the key file in the data folder is used (secrets/load.ts).
     */
    secretKeys: s.secretKeys,
    /** Where this process serves its Prometheus metrics (METRICS_PORT, METRICS_HOST); undefined: not at all. */
    metrics: s.metricsPort !== undefined ? Object.freeze({ port: s.metricsPort, host: s.metricsHost }) : undefined,
  });
}
