/**
 * Read path benchmark (issue 2), on MariaDB + Redis:
 *   1. GET /v1/deals?limit=50 through the whole chain vs a bare Koa route running the same
 *      query, same run, same machine, in alternating rounds: median requests/s of each and the
 *      ratio (target >= 0.7).
 *   2. A page 100,000 rows deep vs the first page, both through the chain, one connection:
 *      time per request and the ratio (target <= 1.3).
 * Load is spread over 100 keys (6000 requests/minute each) so the limiter admits it all.
 * Usage: npm run bench   [BENCH_DATABASE_URL=mysql://root@127.0.0.1:3306/test BENCH_REDIS_URL=redis://127.0.0.1:6379]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import knex from 'knex';
import { createKey, createWorkspace } from '../src/auth/keys.js';
import { ROOT_DIR, loadConfig } from '../src/config.js';
import { createDb } from '../src/db/connect.js';
import { migrateLatest } from '../src/db/migrate.js';
import { encodeCursor } from '../src/kernel/cursor.js';
import { sampleRow, seededRandom } from '../src/kernel/fixtures.js';
import { loadRegistry } from '../src/kernel/registry.js';

const SERVER_URL = new URL(process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/test');
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROWS = Number(process.env.BENCH_ROWS ?? 110_000);
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const KEYS = 100;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DATABASE = 'wsapi_bench';

const dbUrl = new URL(SERVER_URL.href);
dbUrl.pathname = `/${DATABASE}`;
const env = { PATH: process.env.PATH ?? '', DATABASE_URL: dbUrl.href, REDIS_URL, REDIS_PREFIX: 'wsapi_bench:', LOG_LEVEL: 'warn', WORKER: 'off', PORT: '0' };

async function prepare() {
  const server = knex({ client: 'mysql2', connection: { host: SERVER_URL.hostname, port: Number(SERVER_URL.port || 3306), user: decodeURIComponent(SERVER_URL.username), password: decodeURIComponent(SERVER_URL.password) } });
  await server.raw('DROP DATABASE IF EXISTS ??', [DATABASE]);
  await server.raw('CREATE DATABASE ?? CHARACTER SET utf8mb4', [DATABASE]);
  await server.destroy();
  const config = loadConfig(env);
  const db = createDb(config.database);
  await migrateLatest(db, config.migrationsDirs);
  const registry = await loadRegistry(config.pluginsDir);
  const ws = await createWorkspace(db, { name: 'bench', plan: 'enterprise' });
  const catalog = ['read:deals'];
  const tokens: string[] = [];
  for (let i = 0; i < KEYS; i++) tokens.push((await createKey(db, catalog, { workspace: ws.id, name: `bench ${i}`, scopes: catalog, rate_limit: 6000 })).token);
  const deals = registry.byName.get('deal');
  if (!deals) throw new Error('no deal plugin');
  const random = seededRandom(42);
  const start = Date.UTC(2025, 0, 1);
  process.stdout.write(`inserting ${ROWS} deals`);
  for (let done = 0; done < ROWS; done += 2000) {
    const rows = Array.from({ length: Math.min(2000, ROWS - done) }, (_, i) => sampleRow(deals, ws.id, done + i, new Map(), random, start + (done + i) * 1000));
    await db('deals').insert(rows);
    if (done % 20_000 === 0) process.stdout.write('.');
  }
  console.log(' done');
  const deep = (await db('deals').select('created_at', 'id').where('workspace_id', ws.id).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(99_999).limit(1).first()) as { created_at: number; id: string };
  const cursor = encodeCursor({ resource: 'deal', sort: '-created_at', value: Number(deep.created_at), id: deep.id });
  await db.destroy();
  return { workspaceId: ws.id, tokens, cursor };
}

function start(script: string, extra: Record<string, string> = {}): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, script)], { cwd: ROOT_DIR, env: { ...env, LOG_LEVEL: 'info', ...extra } });
    let out = '';
    const collect = (d: Buffer) => {
      out += d;
      const port = /"port":(\d+)[^\n]*"msg":"listening"|"msg":"listening","port":(\d+)/.exec(out);
      if (!port) return;
      // From here on the access log is drained, not kept: the server logs as it would in
      // production (LOG_LEVEL=info, one line per request), and this process does no work for it.
      child.stdout.off('data', collect);
      child.stdout.resume();
      resolve({ url: `http://127.0.0.1:${port[1] ?? port[2]}`, child });
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.on('exit', (code) => reject(new Error(`${script} exited ${code}: ${out}`)));
  });
}

async function load(url: string, tokens: string[], seconds: number, connections = 50) {
  let i = 0;
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${tokens[i++ % tokens.length]}` } }) }],
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { rps: result.requests.average, mean: result.latency.mean, p99: result.latency.p99, total: result.requests.total };
}

const fmt = (n: number) => n.toFixed(n < 10 ? 2 : 0);
const median = <T extends { rps: number }>(runs: T[]): T => [...runs].sort((x, y) => x.rps - y.rps)[Math.floor(runs.length / 2)] as T;

const { workspaceId, tokens, cursor } = await prepare();
const bare = await start('bench/bare-server.ts', { BENCH_WORKSPACE: workspaceId });
const chain = await start('src/server.ts');
try {
  const firstPage = `${chain.url}/v1/deals?limit=50`;
  const deepPage = `${chain.url}/v1/deals?limit=50&cursor=${cursor}`;
  // Warm both (JIT, pools, key cache); then alternate rounds and keep the median of each, so
  // a noisy moment on this shared machine (database, Redis, load generator, two cores) does not
  // decide the ratio.
  await load(`${bare.url}/`, tokens, 2);
  await load(firstPage, tokens, 2);
  const bares: Awaited<ReturnType<typeof load>>[] = [];
  const chains: Awaited<ReturnType<typeof load>>[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    bares.push(await load(`${bare.url}/`, tokens, DURATION));
    chains.push(await load(firstPage, tokens, DURATION));
    console.log('  round %d: bare %s req/s, chain %s req/s', round + 1, fmt(bares[round]?.rps ?? 0), fmt(chains[round]?.rps ?? 0));
  }
  const b = median(bares);
  const c = median(chains);
  // Latency of a single client, first page vs 100,000 rows deep.
  const first = await load(firstPage, tokens, 5, 1);
  const deep = await load(deepPage, tokens, 5, 1);

  console.log('\nGET /v1/deals?limit=50 on MariaDB + Redis, 50 connections, median of %d rounds of %ds', ROUNDS, DURATION);
  console.log('  bare Koa route, same query     %s req/s  (mean %s ms, p99 %s ms)', fmt(b.rps), fmt(b.mean), fmt(b.p99));
  console.log('  whole chain (auth, limiter...) %s req/s  (mean %s ms, p99 %s ms)', fmt(c.rps), fmt(c.mean), fmt(c.p99));
  const ratio = c.rps / b.rps;
  console.log('  ratio chain / bare             %s   (target >= 0.70: %s)', ratio.toFixed(2), ratio >= 0.7 ? 'met' : 'MISSED');
  // One connection: each request waits for the previous, so the time of one is 1 / (req/s),
  // which resolves microseconds where autocannon's latency histogram counts whole ms.
  const firstMs = 1000 / first.rps;
  const deepMs = 1000 / deep.rps;
  console.log('\nPage depth, whole chain, one connection, 5 s each (time per request = 1 / req/s)');
  console.log('  first page                     %s ms  (%s req/s)', firstMs.toFixed(3), fmt(first.rps));
  console.log('  page 100,000 rows deep         %s ms  (%s req/s)', deepMs.toFixed(3), fmt(deep.rps));
  const depth = deepMs / firstMs;
  console.log('  ratio deep / first             %s   (target <= 1.30: %s)', depth.toFixed(2), depth <= 1.3 ? 'met' : 'MISSED');
} finally {
  bare.child.kill('SIGTERM');
  chain.child.kill('SIGTERM');
}
