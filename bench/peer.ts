/**
 * bench:peer (issue 13): GET /v1/deals?limit=50 through the whole chain (key lookup, limiter,
 * scope, validation, the list, the log line) vs its peer, a bare Koa route that runs the same
 * prepared statement with the driver itself (better-sqlite3, or mysql2's execute: no knex)
 * and maps the rows to the same JSON. 10,000 deals; each side in turn, ROUNDS rounds of
 * DURATION s, 50 connections spread over 100 keys; prints requests/s, p50, p99 and each
 * server's RSS, the ratio of every round, their median and spread. Target: chain >= 0.75 (issue 25; 0.7 before).
 * A third side is the same chain with its request log off (REQUEST_LOG=false): the log on may
 * move the list by less than 5% (issue 27).
 * Usage: npm run bench:peer   [BENCH_DATABASE_URL=sqlite:/tmp/peer.db for the embedded default]
 */
import fs from 'node:fs';
import { sampleRow, seededRandom } from '../src/demo/samples.js';
import { loadConfig } from '../src/common/config.js';
import { loadRegistry } from '../src/kernel/registry/registry.js';
import { BACKEND, DURATION, EMBEDDED, env, fmt, freshDatabase, load, medianCpu, medianOf, ROUNDS, start, type Run, type Server } from './lib.js';

const ROWS = 10_000;

/** A process's resident memory now and at its peak, in MB (Linux /proc). */
function rss(pid: number | undefined): { now: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { now: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

const { db, workspaceId, tokens } = await freshDatabase(['read:deals']);
const deals = (await loadRegistry(loadConfig(env).pluginsDir)).byName.get('deal');
if (!deals) throw new Error('no deal plugin');
const random = seededRandom(7);
const chunk = EMBEDDED ? 400 : 2000;
for (let done = 0; done < ROWS; done += chunk) {
  await db('deals').insert(Array.from({ length: chunk }, (_, i) => sampleRow(deals, workspaceId, done + i, new Map(), random, Date.UTC(2026, 0, 1) + (done + i) * 1000)));
}
await db.destroy();

// A first start makes the search terms of the deals inserted above behind the service's back
// (kernel/storage/search-index.ts, at boot): done here, so that no measured server carries that work,
// and the memory it grew, into its rounds (the first server started was 7% slower than a
// second one, same settings, for that alone).
const prime = await start('src/server.ts');
const primed = new Promise((resolve) => prime.child.once('exit', resolve));
prime.child.kill('SIGTERM');
await primed;

const peer = await start('bench/bare-server.ts', { BENCH_WORKSPACE: workspaceId });
const chain = await start('src/server.ts');
const unlogged = await start('src/server.ts', { REQUEST_LOG: 'false' });
try {
  // Each side's own CPU per request is read from /proc around its rounds.
  const at = (server: Server) => ({ pid: server.child.pid });
  const peerUrl = `${peer.url}/deals`;
  const chainUrl = `${chain.url}/v1/deals?limit=50`;
  const unloggedUrl = `${unlogged.url}/v1/deals?limit=50`;
  // Both get the same warm-up (JIT, pools, prepared statements, key cache), then alternate.
  await load(peerUrl, tokens, 2);
  await load(chainUrl, tokens, 2);
  await load(unloggedUrl, tokens, 2);
  const peers: Run[] = [];
  const chains: Run[] = [];
  const unloggeds: Run[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    peers.push(await load(peerUrl, tokens, DURATION, at(peer)));
    // The two chains in turn, each first every other round: neither always follows the peer.
    if (round % 2 === 0) {
      chains.push(await load(chainUrl, tokens, DURATION, at(chain)));
      unloggeds.push(await load(unloggedUrl, tokens, DURATION, at(unlogged)));
    } else {
      unloggeds.push(await load(unloggedUrl, tokens, DURATION, at(unlogged)));
      chains.push(await load(chainUrl, tokens, DURATION, at(chain)));
    }
    console.log('  round %d: peer %s req/s, chain %s req/s (request log off: %s), ratio %s, log on/off %s', round + 1, fmt(peers[round]!.rps), fmt(chains[round]!.rps), fmt(unloggeds[round]!.rps), (chains[round]!.rps / peers[round]!.rps).toFixed(2), (chains[round]!.rps / unloggeds[round]!.rps).toFixed(2));
  }
  const cpuNote = (runs: Run[]) => {
    const cpu = medianCpu(runs);
    return cpu === undefined ? '' : `   CPU ${fmt(cpu)} us/request`;
  };
  const ratios = chains.map((c, i) => c.rps / peers[i]!.rps);
  const row = (name: string, runs: Run[], memory: { now: number; peak: number }) =>
    console.log('  %s %s req/s   p50 %s ms   p99 %s ms   RSS %s MB (peak %s MB)%s', name.padEnd(38), fmt(medianOf(runs.map((r) => r.rps))).padStart(6), medianOf(runs.map((r) => r.p50)), medianOf(runs.map((r) => r.p99)), memory.now.toFixed(0), memory.peak.toFixed(0), cpuNote(runs));
  console.log('\nGET /v1/deals?limit=50 on %s, %d deals, 50 connections, %d rounds of %d s (medians)', BACKEND, ROWS, ROUNDS, DURATION);
  row('peer: bare Koa, same prepared statement', peers, rss(peer.child.pid));
  row('whole chain', chains, rss(chain.child.pid));
  row('whole chain, request log off', unloggeds, rss(unlogged.child.pid));
  const cpuPeer = medianCpu(peers);
  const cpuChain = medianCpu(chains);
  if (cpuPeer !== undefined && cpuChain !== undefined) console.log('  server CPU per request, peer / chain: %s   (the same comparison by each server\'s own CPU time, which moves less with the machine)', (cpuPeer / cpuChain).toFixed(2));
  const ratio = medianOf(ratios);
  console.log('  ratio chain / peer: median %s, spread %s-%s   (target >= 0.75: %s)', ratio.toFixed(2), Math.min(...ratios).toFixed(2), Math.max(...ratios).toFixed(2), ratio >= 0.75 ? 'met' : 'MISSED');
  const logged = chains.map((c, i) => c.rps / unloggeds[i]!.rps);
  const moved = medianOf(logged);
  console.log('  ratio log on / log off: median %s, spread %s-%s   (target: moves < 5%%: %s)', moved.toFixed(3), Math.min(...logged).toFixed(3), Math.max(...logged).toFixed(3), Math.abs(1 - moved) < 0.05 ? 'met' : 'MISSED');
} finally {
  peer.child.kill('SIGTERM');
  chain.child.kill('SIGTERM');
  unlogged.child.kill('SIGTERM');
}
