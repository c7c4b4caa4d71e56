/**
 * Write path benchmark (issue 3), on MariaDB + Redis: POST /v1/deals through the whole chain
 * (auth, limiter, scope, JSON body, ajv, the write and its event in one transaction) vs a bare
 * Koa route doing the same inserts (the deal, its event, the event's entry in the fan-out's
 * queue, its search terms) in one knex transaction, same run, same machine, alternating rounds:
 * median requests/s of each and the ratio (target >= 0.8, issue 13).
 * Then, for what the chain itself costs, the same against a bare route running the same
 * statements through the driver as the API does (db/tx.ts, SQLite's group commit included):
 * target >= 0.8 (issue 25).
 * Then the same POST with the default inline worker (no subscription: nothing to deliver)
 * against WORKER=off: what an idle worker costs the API (target >= 0.9).
 * Last, the same POST with the request log on (the default) and off (REQUEST_LOG=false): what
 * logging each request in the database costs a write (no target; bench:peer holds the read's).
 * Usage: npm run bench:write   [BENCH_DATABASE_URL=... BENCH_REDIS_URL=... | BENCH_DATABASE_URL=sqlite:/tmp/bench.db]
 */
import { BACKEND, compare, CPU_PARTS, DURATION, fmt, freshDatabase, load, medianOf, start, storageFor, type Run } from './lib.js';

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
const unlogged = await start('src/server.ts', { REQUEST_LOG: 'false' });
const post = { method: 'POST' as const, body: BODY };

/** One side of a comparison: what it is called in the output, where it is sent, with which keys. */
interface Side {
  label: string;
  url: string;
  keys: string[];
  /** The server's process, whose CPU time (and the machine's) each run accounts for. */
  pid: number | undefined;
}

/**
 * A side's median CPU time per request, in microseconds, of each part of the machine and of all
 * together; a part under a microsecond (no database server or Redis on SQLite) goes unsaid.
 */
function cpuLine(runs: readonly Run[]): { text: string; total: number } | undefined {
  const parts = runs.map((run) => run.cpuBy);
  if (parts.some((part) => part === undefined)) return undefined;
  const median = (part: (typeof CPU_PARTS)[number]) => medianOf(parts.map((by) => by![part]));
  const total = medianOf(parts.map((by) => CPU_PARTS.reduce((sum, part) => sum + by![part], 0)));
  const said = CPU_PARTS.filter((part) => median(part) >= 1);
  return { text: `${said.map((part) => `${part} ${fmt(median(part))}`).join(', ')}; all ${fmt(total)}`, total };
}

/**
 * Warms both sides, runs them in alternating rounds, and prints each side's median and the
 * ratio subject / baseline (called `ratio`) under `title`; `verdict` says what its median means.
 */
async function versus(title: string, ratio: string, baseline: Side, subject: Side, verdict: (median: number) => string): Promise<void> {
  for (const side of [baseline, subject]) await load(side.url, side.keys, 2, post);
  const runs: Record<'baseline' | 'subject', Run[]> = { baseline: [], subject: [] };
  const run = (side: Side, into: Run[]) => async () => {
    const done = await load(side.url, side.keys, DURATION, { ...post, pid: side.pid });
    into.push(done);
    return done;
  };
  const result = await compare(title, { baseline: baseline.label, subject: subject.label }, run(baseline, runs.baseline), run(subject, runs.subject));
  for (const [side, median] of [[baseline, result.baseline], [subject, result.subject]] as const) {
    console.log('  %s %s req/s  (mean %s ms, p99 %s ms)', side.label.padEnd(51), fmt(median.rps), fmt(median.mean), fmt(median.p99));
  }
  console.log('  ratio %s: %s   (%s)', ratio, result.ratio, verdict(result.median));
  // Where each side's requests spend the machine (two cores, all busy): its req/s follow the sum.
  const cpu = { baseline: cpuLine(runs.baseline), subject: cpuLine(runs.subject) };
  if (cpu.baseline && cpu.subject) {
    console.log('  CPU microseconds a request, %s: %s', baseline.label, cpu.baseline.text);
    console.log('  CPU microseconds a request, %s: %s', subject.label, cpu.subject.text);
    console.log('  the machine\'s CPU a request, baseline / subject: %s (what the ratio of req/s follows)', (cpu.baseline.total / cpu.subject.total).toFixed(2));
  }
}

// The median to three places beside the verdict: 0.897 prints as 0.90 in the ratio, and is short of 0.9.
const target = (min: number) => (median: number) => `target >= ${min.toFixed(2)}: ${median >= min ? 'met' : 'MISSED'} at ${median.toFixed(3)}`;
const whole = { label: 'whole chain', url: `${chain.url}/v1/deals`, keys: tokens, pid: chain.child.pid };

try {
  await versus(`POST /v1/deals on ${BACKEND}, 50 connections`, 'chain / bare', { label: 'bare Koa route, deal + event + queue + terms, one tx', url: `${bare.url}/deals`, keys: tokens, pid: bare.child.pid }, whole, target(0.8));
  await versus(
    'The same against a bare route running the four inserts through the driver (db/tx.ts)',
    'chain / bare driver',
    { label: "bare route, the driver's transaction", url: `${bare.url}/deals?driver`, keys: tokens, pid: bare.child.pid },
    whole,
    (median) => `what authentication, limits, validation and logging cost; ${target(0.8)(median)}`,
  );
  await versus(
    'The same POST with the inline worker (no subscription) vs WORKER=off',
    'inline / off',
    { ...whole, label: 'WORKER=off' },
    { label: 'WORKER=inline', url: `${inline.url}/v1/deals`, keys: second.tokens, pid: inline.child.pid },
    target(0.9),
  );
  await versus(
    'The same POST with the request log on and off (REQUEST_LOG=false)',
    'on / off',
    { label: 'request log off', url: `${unlogged.url}/v1/deals`, keys: tokens, pid: unlogged.child.pid },
    { ...whole, label: 'request log on (the default)' },
    () => 'what logging each request costs a write',
  );
} finally {
  bare.child.kill('SIGTERM');
  chain.child.kill('SIGTERM');
  inline.child.kill('SIGTERM');
  unlogged.child.kill('SIGTERM');
}
