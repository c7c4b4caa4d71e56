/**
 * Read path benchmark (issue 2), on MariaDB + Redis, or on the embedded default with
 * BENCH_DATABASE_URL=sqlite:FILE:
 *   1. GET /v1/deals?limit=50 through the whole chain vs a bare Koa route running the same
 *      query, same run, same machine, in alternating rounds: median requests/s of each and the
 *      ratio (target >= 0.7).
 *   2. A page 100,000 rows deep vs the first page, both through the chain, one connection:
 *      time per request and the ratio (target <= 1.3).
 * Usage: npm run bench:read   [BENCH_DATABASE_URL=mysql://root@127.0.0.1:3306/test BENCH_REDIS_URL=redis://127.0.0.1:6379 | BENCH_DATABASE_URL=sqlite:/tmp/bench.db]
 */
import { encodeCursor } from '../src/kernel/cursor.js';
import { sampleRow, seededRandom } from '../src/demo/samples.js';
import { loadRegistry } from '../src/kernel/registry.js';
import { loadConfig } from '../src/config.js';
import { BACKEND, compare, EMBEDDED, DURATION, env, fmt, freshDatabase, load, ROUNDS, start } from './lib.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 110_000);

async function prepare() {
  const { db, workspaceId, tokens } = await freshDatabase(['read:deals']);
  const registry = await loadRegistry(loadConfig(env).pluginsDir);
  const deals = registry.byName.get('deal');
  if (!deals) throw new Error('no deal plugin');
  const random = seededRandom(42);
  const start = Date.UTC(2025, 0, 1);
  process.stdout.write(`inserting ${ROWS} deals`);
  // SQLite takes at most 500 rows in one INSERT.
  const chunk = EMBEDDED ? 400 : 2000;
  for (let done = 0; done < ROWS; done += chunk) {
    const rows = Array.from({ length: Math.min(chunk, ROWS - done) }, (_, i) => sampleRow(deals, workspaceId, done + i, new Map(), random, start + (done + i) * 1000));
    await db('deals').insert(rows);
    if (done % 20_000 < chunk) process.stdout.write('.');
  }
  console.log(' done');
  const deep = (await db('deals').select('created_at', 'id').where('workspace_id', workspaceId).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(99_999).limit(1).first()) as { created_at: number; id: string };
  const cursor = encodeCursor({ resource: 'deal', sort: '-created_at', value: Number(deep.created_at), id: deep.id });
  await db.destroy();
  return { workspaceId, tokens, cursor };
}

const { workspaceId, tokens, cursor } = await prepare();
const bare = await start('bench/bare-server.ts', { BENCH_WORKSPACE: workspaceId });
const chain = await start('src/server.ts');
try {
  const firstPage = `${chain.url}/v1/deals?limit=50`;
  const deepPage = `${chain.url}/v1/deals?limit=50&cursor=${cursor}`;
  // Warm both (JIT, pools, key cache).
  await load(`${bare.url}/deals`, tokens, 2);
  await load(firstPage, tokens, 2);
  const { baseline: b, subject: c } = await compare(
    () => load(`${bare.url}/deals`, tokens, DURATION),
    () => load(firstPage, tokens, DURATION),
  );
  // Latency of a single client, first page vs 100,000 rows deep.
  const first = await load(firstPage, tokens, 5, { connections: 1 });
  const deep = await load(deepPage, tokens, 5, { connections: 1 });

  console.log('\nGET /v1/deals?limit=50 on %s, 50 connections, median of %d rounds of %ds', BACKEND, ROUNDS, DURATION);
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
