import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serverAdmin } from '../../src/db/create.js';
import type { Knex } from 'knex';
import { createClient } from 'redis';
import { loadConfig } from '../../src/common/config.js';
import { createDb } from '../../src/db/connect.js';
import { FolderMigrationSource, migrateLatest } from '../../src/db/migrate.js';
import { newKey } from '../../src/secrets/keyring.js';

/**
 * The backend this run tests: the embedded default, or MySQL + Redis or PostgreSQL + Redis when
 * DATABASE_URL (mysql:// or postgres://) and REDIS_URL are set. Either way the run gets storage
 * of its own (a temporary SQLite file, or a fresh database on the server and a Redis key prefix)
 * and removes only what it created.
 */
export interface Backend {
  /** `mysql` and `postgres` are a database server with Redis. */
  kind: 'embedded' | 'mysql' | 'postgres';
  env: Record<string, string>;
}

let current: Backend | undefined;
let cleanup: (() => Promise<void>) | undefined;

export function backend(): Backend {
  if (!current) throw new Error('the backend is not set up (test/helpers/hooks.ts)');
  return current;
}

export const usesRedis = () => backend().env.REDIS_URL !== undefined;

/**
 * A name no other run uses (its time and a random part): for what a run makes on a server that
 * others share, such as the backends' suites that CI runs side by side.
 */
export const runName = () => `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

export async function setUpBackend(): Promise<void> {
  const run = runName();
  const base = { LOG_LEVEL: 'silent' };
  if (process.env.DATABASE_URL && !process.env.DATABASE_URL.startsWith('sqlite:')) {
    if (!process.env.REDIS_URL) throw new Error('set REDIS_URL with DATABASE_URL: a database server run tests it with Redis');
    const server = serverAdmin(process.env.DATABASE_URL);
    const database = `wsapi_test_${run}`;
    await server.create(database);
    const prefix = `wsapi_test_${run}:`;
    // A database server needs SECRET_KEYS (webhook secrets are sealed under it): one key for this run.
    current = { kind: server.kind, env: { ...base, DATABASE_URL: server.urlOf(database), REDIS_URL: process.env.REDIS_URL, REDIS_PREFIX: prefix, SECRET_KEYS: process.env.SECRET_KEYS ?? newKey() } };
    cleanup = async () => {
      await server.drop(database);
      await server.destroy();
      const redis = createClient({ url: process.env.REDIS_URL });
      await redis.connect();
      for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length > 0) await redis.del(keys);
      redis.destroy();
    };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-test-'));
    current = { kind: 'embedded', env: { ...base, DATABASE_URL: `sqlite:${path.join(dir, 'test.db')}` } };
    cleanup = async () => fs.rmSync(dir, { recursive: true, force: true });
  }
  const config = loadConfig(current.env);
  const db = createDb(config.database);
  await migrateLatest(db, config.migrationsDirs);
  await db.destroy();
}

/**
 * A database of its own beside this run's (same server, same Redis, another key prefix), for a
 * test that migrates what the others must not see. Nothing is migrated yet. `env` holds only
 * the storage settings: pass it over this run's.
 */
export async function isolatedDatabase(name: string): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const { env } = backend();
  if (backend().kind !== 'embedded') {
    const url = new URL(env.DATABASE_URL ?? '');
    const database = `${url.pathname.slice(1)}_${name}`;
    const server = serverAdmin(url.href);
    await server.create(database);
    return {
      env: { DATABASE_URL: server.urlOf(database), REDIS_URL: env.REDIS_URL ?? '', REDIS_PREFIX: `${env.REDIS_PREFIX ?? ''}${name}:` },
      async drop() {
        await server.drop(database);
        await server.destroy();
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `wsapi-${name}-`));
  return { env: { DATABASE_URL: `sqlite:${path.join(dir, 'test.db')}` }, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** What a test of migrations works on (migrationsDatabase). */
export interface MigrationsDatabase {
  /** A knex on the database, once the describe's `before` has run. */
  readonly db: Knex;
  /** Migrates it to this checkout's latest. */
  latest(): Promise<void>;
  /** Undoes one migration (by its name) and those after it. */
  down(migration: string): Promise<void>;
}

/**
 * For a describe that tests migrations (call it in the describe's body): an isolated database,
 * nothing migrated yet, made before its tests and dropped after them, and this run's migrations.
 */
export function migrationsDatabase(name: string): MigrationsDatabase {
  let open: { db: Knex; migrations: readonly string[]; drop(): Promise<void> } | undefined;
  before(async () => {
    const storage = await isolatedDatabase(name);
    const config = loadConfig({ ...backend().env, ...storage.env });
    open = { db: createDb(config.database), migrations: config.migrationsDirs, drop: storage.drop };
  });
  after(async () => {
    await open?.db.destroy();
    await open?.drop();
  });
  const opened = () => {
    if (!open) throw new Error(`the ${name} database is made in the describe's before hook`);
    return open;
  };
  return {
    get db() {
      return opened().db;
    },
    latest: async () => {
      await migrateLatest(opened().db, opened().migrations);
    },
    down: async (migration) => {
      await opened().db.migrate.down({ name: migration, migrationSource: new FolderMigrationSource(opened().migrations) });
    },
  };
}

export async function tearDownBackend(): Promise<void> {
  await cleanup?.();
}
