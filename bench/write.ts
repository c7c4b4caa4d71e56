/**
 * Write path benchmark (issue 3), on MariaDB + Redis: POST /v1/deals through the whole chain
 * (auth, limiter, scope, JSON body, ajv, the write and its event in one transaction) vs a bare
 * Koa route doing the same insert plus the event insert in one knex transaction, same run, same
 * machine, alternating rounds: median requests/s of each and the ratio (target >= 0.8, issue 13).
 * Then, for what the chain itself costs, the same against a bare route running the same two
 * statements through the driver as the API does (db/tx.ts, SQLite's group commit included):
 * target >= 0.8 (issue 25).
 * Then the same POST with the default inline worker (no subscription: nothing to deliver)
 * against WORKER=off: what an idle worker costs the API (target >= 0.9).
 * Usage: npm run bench:write   [BENCH_DATABASE_URL=... BENCH_REDIS_URL=... | BENCH_DATABASE_URL=sqlite:/tmp/bench.db]
 */
import { BACKEND, compare, DURATION, fmt, freshDatabase, load, ROUNDS, start, storageFor } from './lib.js';

const BODY = JSON.stringify({ title: 'Benchmark deal', amount: 125000, currency: 'EUR', stage: 'qualified' });

const { db, workspaceId, tokens } = await freshDatabase(['write:deals']);
await db.destroy();
const bare = await start('bench/bare-server.ts', { BENCH_WORKSPACE: workspaceId });
const chain = await start('src/server.ts');
// The inline-worker server gets a database (and Redis prefix) of its own: its worker must not
// fan out the events the other server writes, nor hear its signals.
const second = await freshDatabase(['write:deals'], 'inline');
await second.db.destroy();
const inline = await start('src/server.ts', { ...storageFor('inline'), WORKER: 'inline' });
try {
  const post = { method: 'POST' as const, body: BODY };
  await load(`${bare.url}/deals`, tokens, 2, post);
  await load(`${chain.url}/v1/deals`, tokens, 2, post);
  const { baseline: b, subject: c, ratio: rounds, median: ratio } = await compare(
    () => load(`${bare.url}/deals`, tokens, DURATION, post),
    () => load(`${chain.url}/v1/deals`, tokens, DURATION, post),
  );
  console.log('\nPOST /v1/deals on %s, 50 connections, median of %d rounds of %ds', BACKEND, ROUNDS, DURATION);
  console.log('  bare Koa route, deal + event + terms, one tx       %s req/s  (mean %s ms, p99 %s ms)', fmt(b.rps), fmt(b.mean), fmt(b.p99));
  console.log('  whole chain                                         %s req/s  (mean %s ms, p99 %s ms)', fmt(c.rps), fmt(c.mean), fmt(c.p99));
  console.log('  ratio chain / bare: %s   (target >= 0.80: %s)', rounds, ratio >= 0.8 ? 'met' : 'MISSED');

  await load(`${bare.url}/deals?driver`, tokens, 2, post);
  const { baseline: d, subject: c2, ratio: driverRounds, median: driver } = await compare(
    () => load(`${bare.url}/deals?driver`, tokens, DURATION, post),
    () => load(`${chain.url}/v1/deals`, tokens, DURATION, post),
  );
  console.log('\nThe same against a bare route running the three inserts through the driver (db/tx.ts), median of %d rounds of %ds', ROUNDS, DURATION);
  console.log('  bare route, the driver\'s transaction               %s req/s  (mean %s ms, p99 %s ms)', fmt(d.rps), fmt(d.mean), fmt(d.p99));
  console.log('  whole chain                                         %s req/s  (mean %s ms, p99 %s ms)', fmt(c2.rps), fmt(c2.mean), fmt(c2.p99));
  console.log('  ratio chain / bare driver: %s   (what authentication, limits, validation and logging cost; target >= 0.80: %s)', driverRounds, driver >= 0.8 ? 'met' : 'MISSED');

  await load(`${inline.url}/v1/deals`, second.tokens, 2, post);
  const { baseline: off, subject: on, ratio: idleRounds, median: idle } = await compare(
    () => load(`${chain.url}/v1/deals`, tokens, DURATION, post),
    () => load(`${inline.url}/v1/deals`, second.tokens, DURATION, post),
  );
  console.log('\nThe same POST with the inline worker (no subscription) vs WORKER=off, median of %d rounds of %ds', ROUNDS, DURATION);
  console.log('  WORKER=off                                          %s req/s  (mean %s ms, p99 %s ms)', fmt(off.rps), fmt(off.mean), fmt(off.p99));
  console.log('  WORKER=inline                                       %s req/s  (mean %s ms, p99 %s ms)', fmt(on.rps), fmt(on.mean), fmt(on.p99));
  console.log('  ratio inline / off: %s   (target >= 0.90: %s)', idleRounds, idle >= 0.9 ? 'met' : 'MISSED');
} finally {
  bare.child.kill('SIGTERM');
  chain.child.kill('SIGTERM');
  inline.child.kill('SIGTERM');
}
