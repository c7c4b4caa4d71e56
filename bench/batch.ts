/**
 * Batch create (issue 26): 100 deals in one POST /v1/deals/batch against the same 100 deals as
 * 100 single POST /v1/deals, one after another on one keep-alive connection (how a client
 * importing a list would send them), both through the whole chain, in alternating rounds.
 * Time to create the 100, median and spread of the ratio single / batch (target >= 20).
 * Usage: npm run bench:batch   [BENCH_DATABASE_URL=... BENCH_REDIS_URL=... | BENCH_DATABASE_URL=sqlite:/tmp/bench.db]
 */
import { Agent, request } from 'undici';
import { BACKEND, freshDatabase, medianOf, ROUNDS, start } from './lib.js';

const ITEMS = 100;
/** Sets of 100 per round and side: enough for a few hundred milliseconds of each. */
const SETS = Number(process.env.BENCH_SETS ?? 20);

const { db, tokens } = await freshDatabase(['write:deals']);
await db.destroy();
const chain = await start('src/server.ts');
const agent = new Agent({ connections: 1, pipelining: 1 });
let next = 0;

async function post(path: string, body: unknown): Promise<void> {
  const res = await request(`${chain.url}${path}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${tokens[next++ % tokens.length]}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.body.text();
  if (res.statusCode !== 201) throw new Error(`${path}: ${res.statusCode}`);
}

const deal = (i: number) => ({ title: `Imported deal ${i}`, amount: 1000 + i, currency: 'EUR', stage: 'qualified' });

/** Milliseconds to create `SETS` sets of 100, each way; per set. */
async function singles(): Promise<number> {
  const started = performance.now();
  for (let set = 0; set < SETS; set++) for (let i = 0; i < ITEMS; i++) await post('/v1/deals', deal(i));
  return (performance.now() - started) / SETS;
}
async function batches(): Promise<number> {
  const started = performance.now();
  for (let set = 0; set < SETS; set++) await post('/v1/deals/batch', { data: Array.from({ length: ITEMS }, (_, i) => deal(i)) });
  return (performance.now() - started) / SETS;
}

try {
  // Both warmed alike (JIT, statements, key cache).
  await singles();
  await batches();
  const ratios: number[] = [];
  const single: number[] = [];
  const batched: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    single.push(await singles());
    batched.push(await batches());
    ratios.push(single[round]! / batched[round]!);
    console.log('  round %d: 100 single POSTs %s ms, one batch of 100 %s ms, ratio %s', round + 1, single[round]!.toFixed(1), batched[round]!.toFixed(2), ratios[round]!.toFixed(1));
  }
  const ratio = medianOf(ratios);
  console.log('\n100 deals on %s, whole chain, one connection, %d rounds of %d sets (medians)', BACKEND, ROUNDS, SETS);
  console.log('  100 single POST /v1/deals        %s ms', medianOf(single).toFixed(1));
  console.log('  one POST /v1/deals/batch of 100  %s ms', medianOf(batched).toFixed(2));
  console.log('  ratio single / batch: median %s, spread %s-%s   (target >= 20: %s)', ratio.toFixed(2), Math.min(...ratios).toFixed(1), Math.max(...ratios).toFixed(1), ratio >= 20 ? 'met' : 'MISSED');
} finally {
  await agent.close();
  chain.child.kill('SIGTERM');
}
