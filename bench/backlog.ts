/**
 * The inline worker and a backlog (issue 24, item 4): what the API's answers cost while the
 * server's own worker starts on 50,000 pending deliveries, measured from the moment the server
 * listens (no pause: what a user sees after an outage). Each round seeds the backlog afresh,
 * then serves it first with WORKER=off (the baseline: the same server, the same data, no
 * worker) and then with WORKER=inline, probing GET /v1/health one request at a time for
 * BENCH_SECONDS (default 8): p50, p99 and the slowest, and p99 inline / off as a ratio.
 * Target: p99 under 250 ms while the inline worker drains.
 * Usage: npm run bench:backlog   [BENCH_DATABASE_URL=sqlite:FILE (the embedded default) or mysql://...]
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { newId } from '../src/common/ids.js';
import { newDelivery } from '../src/webhooks/deliveries.js';
import { pendingEntry } from '../src/kernel/storage/outbox.js';
import { BACKEND, ROUNDS, fmt, freshDatabase, medianOf, start } from './lib.js';

const PENDING = Number(process.env.BENCH_PENDING ?? 50_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/** `BENCH_BACKLOG=events`: the events alone, not fanned out yet (written while no worker ran); by default their deliveries too. */
const FANNED_OUT = process.env.BENCH_BACKLOG !== 'events';

let delivered = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    delivered += 1;
    setTimeout(() => res.end(), 5);
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

/** A fresh database whose one subscription has PENDING deliveries due, as a long outage leaves them. */
async function seed(): Promise<string> {
  const { db, workspaceId, tokens } = await freshDatabase(['read:deals', 'webhooks:manage']);
  // The subscription through the API, its secret sealed as the service seals it.
  const server = await start('src/server.ts', { WORKER: 'off', WEBHOOK_ALLOW_PRIVATE: 'true' });
  const made = await fetch(`${server.url}/v1/webhooks`, { method: 'POST', headers: { authorization: `Bearer ${tokens[0]}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: receiverUrl, events: ['deal.created'] }) });
  server.child.kill('SIGTERM');
  await new Promise((r) => server.child.once('exit', r));
  if (made.status !== 201) throw new Error(`cannot subscribe: ${made.status} ${await made.text()}`);
  const subscriptionId = ((await made.json()) as { id: string }).id;
  const now = Date.now();
  for (let i = 0; i < PENDING; i += 500) {
    const events = Array.from({ length: Math.min(500, PENDING - i) }, () => {
      const id = newId('evt_');
      const payload = JSON.stringify({ id, type: 'deal.created', created_at: new Date(now).toISOString(), data: { object: { id: newId('deal_') }, previous: {} } });
      return { id, workspace_id: workspaceId, type: 'deal.created', object_id: 'deal_x', payload, created_at: now };
    });
    await db.transaction(async (trx) => {
      if (FANNED_OUT) {
        await trx('events').insert(events);
        await trx('webhook_deliveries').insert(events.map((e) => newDelivery(workspaceId, subscriptionId, e, 3, now)));
      } else {
        await trx('events').insert(events);
        await trx('events_pending').insert(events.map(pendingEntry));
      }
    });
  }
  await db.destroy();
  return tokens[0] as string;
}

interface Probe {
  p50: number;
  p99: number;
  max: number;
  count: number;
  delivered: number;
  /** The longest the server's event loop was held at once (prom-client's monitorEventLoopDelay, over the whole probe), ms. */
  loopMax: number;
}

/** A free loopback port, for the server's metrics. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Starts the server with `worker`, and probes /v1/health back to back from the moment it listens. */
async function probe(worker: 'off' | 'inline', token: string): Promise<Probe> {
  delivered = 0;
  const metricsPort = await freePort();
  const server = await start('src/server.ts', { WORKER: worker, WEBHOOK_ALLOW_PRIVATE: 'true', METRICS_PORT: String(metricsPort) });
  const times: number[] = [];
  const loop = { max: NaN };
  const until = Date.now() + SECONDS * 1000;
  try {
    while (Date.now() < until) {
      const started = performance.now();
      const res = await fetch(`${server.url}/v1/health`, { headers: { authorization: `Bearer ${token}` } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`/v1/health answered ${res.status}`);
      times.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 10));
    }
    // Read once, at the end: the histogram covers everything since the server started.
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    loop.max = 1000 * Number(/^wsapi_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(metrics)?.[1] ?? NaN);
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((r) => server.child.once('exit', r));
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: at(1), count: times.length, delivered, loopMax: loop.max };
}

const rows: Array<{ off: Probe; inline: Probe }> = [];
try {
  for (let round = 1; round <= ROUNDS; round++) {
    process.stdout.write(`round ${round}/${ROUNDS}: seeding ${PENDING} ${FANNED_OUT ? 'deliveries' : 'events'}... `);
    const token = await seed();
    const off = await probe('off', token);
    const inline = await probe('inline', token);
    rows.push({ off, inline });
    console.log(`off p99 ${fmt(off.p99)} ms; inline p99 ${fmt(inline.p99)} ms (max ${fmt(inline.max)}), ${inline.delivered} delivered in ${SECONDS} s; longest hold of the loop: off ${fmt(off.loopMax)} ms, inline ${fmt(inline.loopMax)} ms`);
  }
} finally {
  receiver.close();
}

const ratios = rows.map((r) => r.inline.p99 / r.off.p99);
console.log('\nGET /v1/health from the moment the server listens, %d %s, %s, %d rounds of %d s:', PENDING, FANNED_OUT ? 'pending deliveries' : 'events not fanned out yet', BACKEND, ROUNDS, SECONDS);
console.log('  WORKER=off    p50 %s ms   p99 %s ms   max %s ms', fmt(medianOf(rows.map((r) => r.off.p50))), fmt(medianOf(rows.map((r) => r.off.p99))), fmt(medianOf(rows.map((r) => r.off.max))));
console.log('  WORKER=inline p50 %s ms   p99 %s ms   max %s ms   (%s deliveries meanwhile)', fmt(medianOf(rows.map((r) => r.inline.p50))), fmt(medianOf(rows.map((r) => r.inline.p99))), fmt(medianOf(rows.map((r) => r.inline.max))), fmt(medianOf(rows.map((r) => r.inline.delivered))));
console.log('  p99 inline / off: median %s (spread %s-%s)', medianOf(ratios).toFixed(2), Math.min(...ratios).toFixed(2), Math.max(...ratios).toFixed(2));
console.log('  longest hold of the event loop (any cause: start-up, requests, the worker): off %s ms, inline %s ms (worst round %s ms)', fmt(medianOf(rows.map((r) => r.off.loopMax))), fmt(medianOf(rows.map((r) => r.inline.loopMax))), fmt(Math.max(...rows.map((r) => r.inline.loopMax))));
const p99 = medianOf(rows.map((r) => r.inline.p99));
console.log('  target: p99 under 250 ms while the inline worker drains: %s', p99 < 250 ? 'met' : 'MISSED');
