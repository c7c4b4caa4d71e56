/**
 * This checkout against another commit, same machine, same database, same moment:
 * `GET /v1/deals?limit=50` through the whole chain of both servers, in alternating rounds,
 * medians and spread of each and the ratio this / other. For "the public list must not move".
 *   git worktree add /tmp/base <commit> && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   BENCH_OTHER=/tmp/base npm run bench:ab   [BENCH_DATABASE_URL=sqlite:/tmp/ab.db for the embedded default]
 * The other checkout's schema must be older or the same: it migrates first and starts, then
 * this one adds its migrations (an older server ignores newer tables and nullable columns) and
 * starts, and then the deals are written.
 * BENCH_AB=post compares POST /v1/deals instead; BENCH_AB=patch, PATCH /v1/deals/{id} of the
 * 10,000 deals in turn, each with a new amount (so every PATCH writes): what a write costs.
 * BENCH_TRACES=0.1 runs this checkout with traces on (OTEL_EXPORTER_OTLP_ENDPOINT), keeping that
 * share of the requests' traces (parentbased_traceidratio), exported to a collector that takes
 * everything and keeps nothing, in a process of its own: what tracing costs a server.
 * BENCH_CONNECTIONS (50 unless set) is the load's concurrency; BENCH_STDOUT_DIR=DIR keeps each
 * server's output there (with BENCH_NODE_FLAGS=--trace-gc, its garbage collections).
 * BENCH_PAIRS=3 measures three pairs of fresh servers in turn and prints the median over them:
 * one process's luck is not its code's (six servers of one commit: 158-183 us of CPU a POST).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sampleRow, seededRandom } from '../src/demo/samples.js';
import { loadConfig, ROOT_DIR } from '../src/common/config.js';
import { loadRegistry } from '../src/kernel/registry/registry.js';
import { BACKEND, DURATION, emptyDatabase, env, fmt, load, medianCpu, medianOf, populate, ROUNDS, start, startSink, type Run, type Server } from './lib.js';

const OTHER = process.env.BENCH_OTHER;
if (!OTHER) throw new Error('set BENCH_OTHER to the other checkout (a git worktree with node_modules)');
const ROWS = 10_000;
/** Concurrent connections of the load (BENCH_CONNECTIONS, 50 unless set): fewer keeps the servers below saturation. */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** Pairs of fresh servers measured in turn (BENCH_PAIRS, 1 unless set), each with its own rounds; the summary is the median over pairs. */
const PAIRS = Number(process.env.BENCH_PAIRS ?? 1);

function migrateOther(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(OTHER as string, 'src/cli/migrate.ts')], { cwd: OTHER, env, stdio: 'inherit' });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the other checkout's migrate exited ${code}`))));
  });
}

await emptyDatabase();
await migrateOther();
/**
 * The other checkout's server. Restarted (a pair after the first), it finds this checkout's
 * migrations applied and would refuse to start without their files: it is given them, linked
 * into a folder of their own (MIGRATIONS_DIR), already applied, so none runs.
 */
let newerMigrations: string | undefined;
function startOther(): Promise<Server> {
  if (!newerMigrations) return start('src/server.ts', {}, undefined, OTHER);
  return start('src/server.ts', { MIGRATIONS_DIR: newerMigrations }, undefined, OTHER);
}
function linkNewerMigrations(): string | undefined {
  const theirs = new Set(fs.readdirSync(path.join(OTHER as string, 'migrations')));
  const ours = fs.readdirSync(path.join(ROOT_DIR, 'migrations')).filter((file) => !theirs.has(file));
  if (ours.length === 0) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ab-migrations-'));
  for (const file of ours) fs.symlinkSync(path.join(ROOT_DIR, 'migrations', file), path.join(dir, file));
  return dir;
}
let other = await startOther();
const { db, workspaceId, tokens } = await populate(['read:deals', 'write:deals']);
// This checkout's server starts as the other did, before the deals are written: a server
// started on the written deals paid more a request than one started before, whatever the code
// (an A/A run of one commit against itself gave 0.83 on SQLite's POST), so neither does. (It
// also leaves both without search terms for those deals, which neither request uses.)
const TRACES = process.env.BENCH_TRACES;
const collector = TRACES ? await startSink() : undefined;
const startSelf = () => start('src/server.ts', collector ? { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: TRACES ?? '' } : {});
let self = await startSelf();
const registry = await loadRegistry(loadConfig(env).pluginsDir);
const deals = registry.byName.get('deal');
if (!deals) throw new Error('no deal plugin');
const random = seededRandom(7);
for (let done = 0; done < ROWS; done += 400) {
  await db('deals').insert(Array.from({ length: Math.min(400, ROWS - done) }, (_, i) => sampleRow(deals, workspaceId, done + i, new Map(), random, Date.UTC(2025, 0, 1) + (done + i) * 1000)));
}
const ids = ((await db('deals').select('id').where({ workspace_id: workspaceId }).orderBy('id')) as Array<{ id: string }>).map((d) => d.id);
await db.destroy();
const MODE = process.env.BENCH_AB ?? 'get';
const request =
  MODE === 'post'
    ? ({ method: 'POST', body: JSON.stringify({ title: 'A/B deal', amount: 1000, currency: 'EUR' }) } as const)
    : MODE === 'patch'
      ? ({ method: 'PATCH', vary: (n: number) => ({ path: `/v1/deals/${ids[n % ids.length]}`, body: JSON.stringify({ amount: n }) }) } as const)
      : ({} as const);
/** Stops a server and waits until its process has exited (the next pair must not share the machine with it). */
async function stop(server: Server): Promise<void> {
  // Exited already, by a code or by a signal: its 'exit' event has been and gone.
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

const urlPath = MODE === 'post' ? '/v1/deals' : MODE === 'patch' ? `/v1/deals/${ids[0]}` : '/v1/deals?limit=50';
const med = (xs: Run[]) => medianOf(xs.map((r) => r.rps));

/** One pair of servers: a warm-up of each, then ROUNDS alternating rounds; prints each round and the pair's summary. */
async function measure(pair: number): Promise<{ ratio: number; cpu?: number }> {
  await load(other.url + urlPath, tokens, 3, { ...request, connections: CONNECTIONS });
  await load(self.url + urlPath, tokens, 3, { ...request, connections: CONNECTIONS });
  const runs: { other: Run[]; self: Run[] } = { other: [], self: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, so neither always follows the other's garbage.
    const order = round % 2 === 0 ? (['other', 'self'] as const) : (['self', 'other'] as const);
    for (const side of order) {
      const server = side === 'self' ? self : other;
      runs[side].push(await load(server.url + urlPath, tokens, DURATION, { ...request, connections: CONNECTIONS, pid: server.child.pid }));
    }
    const cpuOf = (side: 'other' | 'self') => {
      const us = runs[side][round]?.cpu;
      return us === undefined ? '' : `, ${fmt(us)} us CPU/request`;
    };
    console.log('  round %d: other %s req/s%s; this %s req/s%s', round + 1, fmt(runs.other[round]?.rps ?? 0), cpuOf('other'), fmt(runs.self[round]?.rps ?? 0), cpuOf('self'));
  }
  const spread = (xs: Run[]) => `${fmt(Math.min(...xs.map((r) => r.rps)))}-${fmt(Math.max(...xs.map((r) => r.rps)))}`;
  console.log('\n%s %s on %s, %d connections, %d rounds of %ds, alternating%s%s', MODE.toUpperCase(), MODE === 'patch' ? '/v1/deals/{id}' : urlPath, BACKEND, CONNECTIONS, ROUNDS, DURATION, TRACES ? `; this checkout traced at ${TRACES}` : '', PAIRS > 1 ? `; pair ${pair + 1} of ${PAIRS}` : '');
  console.log('  other (%s)  median %s req/s  (spread %s)', OTHER, fmt(med(runs.other)), spread(runs.other));
  console.log('  this checkout     median %s req/s  (spread %s)', fmt(med(runs.self)), spread(runs.self));
  const ratios = runs.self.map((r, i) => r.rps / (runs.other[i]?.rps ?? 1)).sort((a, b) => a - b);
  const ratio = med(runs.self) / med(runs.other);
  console.log('  ratio this / other  median of medians %s, per round %s', ratio.toFixed(2), ratios.map((r) => r.toFixed(2)).join(' '));
  const cpuOther = medianCpu(runs.other);
  const cpuSelf = medianCpu(runs.self);
  if (cpuOther === undefined || cpuSelf === undefined) return { ratio };
  console.log('  server CPU per request  other %s us, this %s us (medians), this / other %s', fmt(cpuOther), fmt(cpuSelf), (cpuSelf / cpuOther).toFixed(2));
  return { ratio, cpu: cpuSelf / cpuOther };
}

try {
  const results: Array<{ ratio: number; cpu?: number }> = [];
  for (let pair = 0; pair < PAIRS; pair++) {
    if (pair > 0) {
      // Fresh processes for each pair, started in turn in either order: one process's luck
      // (six servers of one commit measured 158-183 us of CPU a request) is not the code's.
      await Promise.all([stop(other), stop(self)]);
      newerMigrations ??= linkNewerMigrations();
      if (pair % 2 === 0) {
        other = await startOther();
        self = await startSelf();
      } else {
        self = await startSelf();
        other = await startOther();
      }
      console.log('');
    }
    results.push(await measure(pair));
  }
  if (PAIRS > 1) {
    const cpus = results.flatMap((r) => (r.cpu === undefined ? [] : [r.cpu]));
    console.log('\nOver %d pairs of fresh servers: ratio this / other per pair %s, median %s', PAIRS, results.map((r) => r.ratio.toFixed(2)).join(' '), medianOf(results.map((r) => r.ratio)).toFixed(2));
    if (cpus.length === PAIRS) console.log('  server CPU per request this / other per pair %s, median %s', cpus.map((c) => c.toFixed(2)).join(' '), medianOf(cpus).toFixed(2));
  }
} finally {
  other.child.kill('SIGTERM');
  self.child.kill('SIGTERM');
  collector?.child.kill('SIGTERM');
  if (newerMigrations) fs.rmSync(newerMigrations, { recursive: true, force: true });
}
