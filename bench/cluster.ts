/**
 * What WEB_CONCURRENCY gives on this machine: GET /v1/deals?limit=50 from one server process
 * against two sharing the port (node:cluster), both on the same MariaDB + Redis database, in
 * alternating rounds, with the load generator on the same cores (as on a one-box deployment).
 * Prints requests/s, mean and p99 of each, and the ratio. Needs Redis (WEB_CONCURRENCY does).
 * Usage: npm run bench:cluster   [BENCH_DATABASE_URL=mysql://... BENCH_REDIS_URL=redis://... BENCH_PROCESSES=2]
 */
import os from 'node:os';
import { sampleRow, seededRandom } from '../src/demo/samples.js';
import { loadRegistry } from '../src/kernel/registry/registry.js';
import { loadConfig } from '../src/common/config.js';
import { BACKEND, compare, DURATION, EMBEDDED, env, fmt, freshDatabase, load, start } from './lib.js';

if (EMBEDDED) throw new Error('bench:cluster needs MariaDB + Redis: WEB_CONCURRENCY above 1 is refused without Redis');
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 2);
const ROWS = 2000;

const { db, workspaceId, tokens } = await freshDatabase(['read:deals']);
const registry = await loadRegistry(loadConfig(env).pluginsDir);
const deals = registry.byName.get('deal');
if (!deals) throw new Error('no deal plugin');
const random = seededRandom(7);
for (let done = 0; done < ROWS; done += 500) {
  await db('deals').insert(Array.from({ length: 500 }, (_, i) => sampleRow(deals, workspaceId, done + i, new Map(), random, Date.UTC(2026, 0, 1) + (done + i) * 1000)));
}
await db.destroy();

const one = await start('src/server.ts');
const many = await start('src/server.ts', { WEB_CONCURRENCY: String(PROCESSES) });
try {
  const { baseline: a, subject: b } = await compare(
    `GET /v1/deals?limit=50 on ${BACKEND}, ${os.cpus().length} cores, 50 connections`,
    { baseline: 'WEB_CONCURRENCY=1', subject: `WEB_CONCURRENCY=${PROCESSES}` },
    () => load(`${one.url}/v1/deals?limit=50`, tokens, DURATION),
    () => load(`${many.url}/v1/deals?limit=50`, tokens, DURATION),
  );
  console.log('  WEB_CONCURRENCY=1   %s req/s  (mean %s ms, p99 %s ms)', fmt(a.rps), fmt(a.mean), fmt(a.p99));
  console.log('  WEB_CONCURRENCY=%d   %s req/s  (mean %s ms, p99 %s ms)', PROCESSES, fmt(b.rps), fmt(b.mean), fmt(b.p99));
  console.log('  ratio %d / 1         %s', PROCESSES, (b.rps / a.rps).toFixed(2));
} finally {
  one.child.kill('SIGTERM');
  many.child.kill('SIGTERM');
}
