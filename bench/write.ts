/**
 * Write path benchmark (issue 3), on MariaDB + Redis: POST /v1/deals through the whole chain
 * (auth, limiter, scope, JSON body, ajv, the write and its event in one transaction) vs a bare
 * Koa route doing the same insert plus the event insert in one transaction, same run, same
 * machine, alternating rounds: median requests/s of each and the ratio (target >= 0.7).
 * Usage: npm run bench:write   [BENCH_DATABASE_URL=... BENCH_REDIS_URL=...]
 */
import { compare, DURATION, fmt, freshDatabase, load, ROUNDS, start } from './lib.js';

const BODY = JSON.stringify({ title: 'Benchmark deal', amount: 125000, currency: 'EUR', stage: 'qualified' });

const { db, workspaceId, tokens } = await freshDatabase(['write:deals']);
await db.destroy();
const bare = await start('bench/bare-server.ts', { BENCH_WORKSPACE: workspaceId });
const chain = await start('src/server.ts');
try {
  const post = { method: 'POST' as const, body: BODY };
  await load(`${bare.url}/deals`, tokens, 2, post);
  await load(`${chain.url}/v1/deals`, tokens, 2, post);
  const { baseline: b, subject: c } = await compare(
    () => load(`${bare.url}/deals`, tokens, DURATION, post),
    () => load(`${chain.url}/v1/deals`, tokens, DURATION, post),
  );
  console.log('\nPOST /v1/deals on MariaDB + Redis, 50 connections, median of %d rounds of %ds', ROUNDS, DURATION);
  console.log('  bare Koa route, insert + event in one transaction  %s req/s  (mean %s ms, p99 %s ms)', fmt(b.rps), fmt(b.mean), fmt(b.p99));
  console.log('  whole chain                                         %s req/s  (mean %s ms, p99 %s ms)', fmt(c.rps), fmt(c.mean), fmt(c.p99));
  const ratio = c.rps / b.rps;
  console.log('  ratio chain / bare                                  %s   (target >= 0.70: %s)', ratio.toFixed(2), ratio >= 0.7 ? 'met' : 'MISSED');
} finally {
  bare.child.kill('SIGTERM');
  chain.child.kill('SIGTERM');
}
