import type { Knex } from 'knex';
import type { Config } from '../common/config.js';
import { pendingMigrations } from '../db/migrate.js';
import type { Redis } from '../db/redis.js';
import type { Ctx } from './middleware/context.js';

/** The probes (docs/reference.md section 12): outside /v1, no key, counted against no limit. */
export const PROBE_PATHS = new Set(['/livez', '/readyz']);

/** A check that has not answered by then counts as failing: a probe must answer quickly. */
const CHECK_TIMEOUT_MS = 1500;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms)))]).finally(() => clearTimeout(timer));
}

type Check = 'ok' | 'unreachable' | 'pending' | 'not configured';

/**
 * `GET /livez`: the process answers. `GET /readyz`: the database answers a query, every
 * migration is applied, and Redis is connected when one is configured; otherwise 503 naming
 * what fails (`failing`), so an orchestrator takes the process out of rotation until it
 * recovers on its own. Once the migrations are seen applied they are not looked at again.
 */
export function probes(deps: { db: Knex; redis: Redis | undefined; config: Pick<Config, 'migrationsDirs' | 'redisUrl'> }) {
  let migrated = false;
  async function migrations(): Promise<Check> {
    if (!migrated) migrated = (await within(pendingMigrations(deps.db, deps.config.migrationsDirs), CHECK_TIMEOUT_MS)).length === 0;
    return migrated ? 'ok' : 'pending';
  }
  async function readiness(): Promise<Record<string, Check>> {
    const database: Check = await within(deps.db.raw('select 1'), CHECK_TIMEOUT_MS).then(
      () => 'ok',
      () => 'unreachable',
    );
    return {
      database,
      // Seen applied once, they stay applied: a database that went away fails alone.
      migrations: migrated ? 'ok' : database === 'ok' ? await migrations().catch((): Check => 'unreachable') : 'unreachable',
      redis: deps.config.redisUrl === undefined ? 'not configured' : deps.redis?.isReady() ? 'ok' : 'unreachable',
    };
  }
  return async (ctx: Ctx) => {
    ctx.state.route = ctx.path;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    if (ctx.path === '/livez') {
      ctx.body = { status: 'live' };
      return;
    }
    const checks = await readiness();
    const failing = Object.entries(checks).filter(([, v]) => v !== 'ok' && v !== 'not configured').map(([k]) => k);
    ctx.status = failing.length === 0 ? 200 : 503;
    ctx.body = failing.length === 0 ? { status: 'ready', checks } : { status: 'not_ready', failing, checks };
  };
}
