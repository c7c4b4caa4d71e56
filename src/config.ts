import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type DatabaseConfig =
  | { client: 'sqlite'; filename: string }
  | { client: 'mysql'; url: string };

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key this service writes, so several deployments can share one Redis. */
  readonly redisPrefix: string;
  readonly worker: 'inline' | 'off';
  readonly webhookAllowPrivate: boolean;
  readonly webhookRetryDelays: readonly number[];
  readonly logLevel: string;
  readonly pluginsDir: string;
  readonly migrationsDirs: readonly string[];
  /** Failed authentications admitted per client address and minute before 429. */
  readonly authFailureLimit: number;
  /** Honour X-Forwarded-For for the client address (only behind a trusted proxy). */
  readonly trustProxy: boolean;
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

export const ROOT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

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
    throw new ConfigError('DATABASE_URL', 'is not a URL (expected sqlite:FILE or mysql://user:pass@host:3306/db)');
  }
  if (parsed.protocol !== 'mysql:') {
    throw new ConfigError('DATABASE_URL', `unsupported scheme "${parsed.protocol}" (expected sqlite: or mysql:)`);
  }
  if (parsed.pathname.length <= 1) throw new ConfigError('DATABASE_URL', 'a mysql URL must name a database, as in mysql://root@127.0.0.1:3306/test');
  return { client: 'mysql', url };
}

function parseRedisUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError('REDIS_URL', 'is not a URL (expected redis://host:6379)');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ConfigError('REDIS_URL', `unsupported scheme "${parsed.protocol}" (expected redis: or rediss:)`);
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

/** Reads every setting once; the result is frozen and passed down, never re-read. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/workspace.db';
  const pluginsDir = path.resolve(env.PLUGINS_DIR || path.join(ROOT_DIR, 'plugins'));
  const migrationsDirs = [path.join(ROOT_DIR, 'migrations')];
  if (env.MIGRATIONS_DIR) migrationsDirs.push(path.resolve(env.MIGRATIONS_DIR));
  const logLevel = oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS);
  const redisPrefix = env.REDIS_PREFIX ?? 'wsapi:';
  if (!/^[A-Za-z0-9:_.-]*$/.test(redisPrefix)) throw new ConfigError('REDIS_PREFIX', 'may hold only letters, digits and : _ . -');

  return Object.freeze({
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: env.HOST || '127.0.0.1',
    database: Object.freeze(parseDatabase(databaseUrl)),
    redisUrl: parseRedisUrl(env.REDIS_URL),
    redisPrefix,
    worker: oneOf(env, 'WORKER', 'inline', ['inline', 'off'] as const),
    webhookAllowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    webhookRetryDelays: Object.freeze(parseRetryDelays(env.WEBHOOK_RETRY_DELAYS)),
    logLevel,
    pluginsDir,
    migrationsDirs: Object.freeze(migrationsDirs),
    authFailureLimit: integer(env, 'AUTH_FAILURE_LIMIT', 30, 1, 100000),
    trustProxy: boolean(env, 'TRUST_PROXY', false),
  });
}
