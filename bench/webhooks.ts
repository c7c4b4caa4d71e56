/**
 * Webhook delivery benchmark (issues 4 and 13), one worker process, a local receiver that
 * answers 200 at once, on MariaDB + Redis or (BENCH_DATABASE_URL=sqlite:FILE) the embedded
 * default:
 *   1. Throughput: 10,000 events written through the API while no worker runs; then one worker
 *      starts and delivers them all: deliveries per second (target >= 2,000).
 *   2. Latency, right after the burst (no pause: what a user sees after a backlog): writes at
 *      200/s while the worker runs; for each delivery, the time from the event's created_at
 *      (taken before the write's commit, so this over-counts slightly) to its arrival at the
 *      receiver: p50 (target < 50 ms) and p99 (target < 250 ms).
 * BENCH_DESTINATION=nats delivers to a NATS destination instead (nats://127.0.0.1:4222, a
 * JetStream stream made for the run; arrivals timed by a subscriber of the subject), with the
 * same targets (issue 28).
 * BENCH_ORDERING=1 compares instead the two orderings of a subscription (issue 58): 100 deals
 * updated 20 times each while no worker runs, then one worker delivers the 2,000 deal.updated
 * events to a subscription with `ordering: "per_object"`, and, in alternating rounds
 * (BENCH_ROUNDS), the same to one with `"none"`: deliveries per second, per_object / none
 * (target >= 0.8).
 * Usage: npm run bench:webhooks   [BENCH_DATABASE_URL=... BENCH_REDIS_URL=...] [BENCH_DESTINATION=nats] [BENCH_ORDERING=1]
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'nats';
import { BACKEND, EMBEDDED, env, fmt, freshDatabase, load, machineCpuMs, medianOf, ROUNDS, start } from './lib.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const RATE = Number(process.env.BENCH_RATE ?? 200);

const arrivals: Array<{ at: number; createdAt: number }> = [];
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { created_at: string };
    arrivals.push({ at, createdAt: Date.parse(event.created_at) });
    res.end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const NATS = process.env.BENCH_DESTINATION === 'nats';
const subject = `wsapi.bench.${Date.now().toString(36)}`;
const nats = NATS ? await connect({ servers: '127.0.0.1:4222' }) : undefined;
if (nats) {
  await (await nats.jetstreamManager()).streams.add({ name: subject.replace(/\./g, '_'), subjects: [subject] });
  // A JetStream publish reaches the subject's plain subscribers too: each arrival is timed here.
  nats.subscribe(subject, {
    callback: (_err, m) => arrivals.push({ at: Date.now(), createdAt: Date.parse((JSON.parse(new TextDecoder().decode(m.data)) as { created_at: string }).created_at) }),
  });
}
const receiverUrl = nats ? `nats://127.0.0.1:4222/${subject}` : `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const { db, tokens } = await freshDatabase(['write:deals', 'webhooks:manage']);
await db.destroy();
let api = await start('src/server.ts', { WEBHOOK_ALLOW_PRIVATE: 'true', WORKER: 'off' });
const workerEnv = { ...env, WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'info' };
let worker: Awaited<ReturnType<typeof start>> | undefined;

async function waitForArrivals(count: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (arrivals.length < count) {
    if (Date.now() > until) throw new Error(`only ${arrivals.length} of ${count} deliveries arrived`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Stops the server and starts it again with its worker (the embedded default) or a worker process: the backlog's delivery starts now. */
async function startDelivering(): Promise<number> {
  if (EMBEDDED) {
    api.child.kill('SIGTERM');
    await new Promise((r) => api.child.once('exit', r));
    api = await start('src/server.ts', { WEBHOOK_ALLOW_PRIVATE: 'true', WORKER: 'inline' });
  } else {
    worker = await start('src/worker.ts', workerEnv, 'delivery worker started');
  }
  return Date.now();
}

/** Stops delivering: the worker process, or the server's inline worker (the server starts again without one). */
async function stopDelivering(): Promise<void> {
  const child = EMBEDDED ? api.child : worker?.child;
  if (!child) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  worker = undefined;
  if (EMBEDDED) api = await start('src/server.ts', { WEBHOOK_ALLOW_PRIVATE: 'true', WORKER: 'off' });
}

/** BENCH_ORDERING: per_object against none, each round 100 deals x 20 updates delivered from a backlog. */
async function compareOrdering(): Promise<void> {
  const OBJECTS = 100;
  const UPDATES = 20;
  const call = (path: string, method: string, json?: unknown) => fetch(`${api.url}${path}`, { method, headers: { authorization: `Bearer ${tokens[0]}`, 'content-type': 'application/json' }, ...(json ? { body: JSON.stringify(json) } : {}) });
  const ids: string[] = [];
  for (let i = 0; i < OBJECTS; i++) ids.push(((await (await call('/v1/deals', 'POST', { title: `Ordered ${i}`, amount: 1, currency: 'EUR' })).json()) as { id: string }).id);
  const rates: Record<'none' | 'per_object', number[]> = { none: [], per_object: [] };
  // CPU time a delivery took, of the process that delivers and of the database (it moves less than the rate with what else the machine does).
  const cpu: Record<'none' | 'per_object', Array<{ worker: number; database: number }>> = { none: [], per_object: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const ordering of round % 2 === 0 ? (['per_object', 'none'] as const) : (['none', 'per_object'] as const)) {
      const made = await call('/v1/webhooks', 'POST', { url: receiverUrl, events: ['deal.updated'], ordering });
      if (made.status !== 201) throw new Error(`cannot subscribe: ${made.status} ${await made.text()}`);
      const sub = (await made.json()) as { id: string };
      // Each deal's updates one after another (the object's versions), the deals side by side.
      await load(`${api.url}/v1/deals`, tokens, 120, { method: 'PATCH', amount: OBJECTS * UPDATES, vary: (n) => ({ path: `/v1/deals/${ids[n % OBJECTS]}`, body: JSON.stringify({ amount: n + 2 }) }) });
      arrivals.length = 0;
      const started = await startDelivering();
      const pid = (EMBEDDED ? api : worker)?.child.pid ?? 0;
      const before = machineCpuMs(pid);
      await waitForArrivals(OBJECTS * UPDATES, 120_000);
      const after = machineCpuMs(pid);
      const rate = (OBJECTS * UPDATES) / ((arrivals[arrivals.length - 1]!.at - started) / 1000);
      rates[ordering].push(rate);
      const used = before && after ? { worker: ((after.server - before.server) * 1000) / (OBJECTS * UPDATES), database: ((after.database - before.database) * 1000) / (OBJECTS * UPDATES) } : undefined;
      if (used) cpu[ordering].push(used);
      console.log('  round %d, %s: %s deliveries/s%s', round + 1, ordering, fmt(rate), used ? `, CPU a delivery: ${fmt(used.worker)} us delivering${EMBEDDED ? '' : `, ${fmt(used.database)} us database`}` : '');
      await stopDelivering();
      const gone = await call(`/v1/webhooks/${sub.id}`, 'DELETE');
      if (gone.status !== 204) throw new Error(`cannot delete the subscription: ${gone.status}`);
    }
  }
  const ratios = rates.per_object.map((r, i) => r / (rates.none[i] ?? NaN)).sort((a, b) => a - b);
  console.log('\nOrdered delivery, %d deals x %d updates, one worker (%s), %s, receiver answering 200 at once, %d rounds', OBJECTS, UPDATES, EMBEDDED ? 'the inline worker of the server' : 'a worker process', BACKEND, ROUNDS);
  console.log('  none        median %s deliveries/s', fmt(medianOf(rates.none)));
  console.log('  per_object  median %s deliveries/s', fmt(medianOf(rates.per_object)));
  if (cpu.none.length > 0 && cpu.per_object.length > 0) {
    const of = (o: 'none' | 'per_object', part: 'worker' | 'database') => medianOf(cpu[o].map((c) => c[part]));
    console.log('  CPU a delivery (medians): delivering %s us with none, %s with per_object (%s)%s', fmt(of('none', 'worker')), fmt(of('per_object', 'worker')), (of('per_object', 'worker') / of('none', 'worker')).toFixed(2), EMBEDDED ? '' : `; database ${fmt(of('none', 'database'))} and ${fmt(of('per_object', 'database'))} us (${(of('per_object', 'database') / of('none', 'database')).toFixed(2)})`);
  }
  const ratio = medianOf(rates.per_object) / medianOf(rates.none);
  console.log('  per_object / none  %s (per round %s; target >= 0.8: %s)', ratio.toFixed(2), ratios.map((r) => r.toFixed(2)).join(' '), ratio >= 0.8 ? 'met' : 'MISSED');
}

/** The throughput of a backlog of EVENTS, then the latency of a steady stream right after it. */
async function throughputAndLatency(): Promise<void> {
  const sub = await fetch(`${api.url}/v1/webhooks`, { method: 'POST', headers: { authorization: `Bearer ${tokens[0]}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: receiverUrl, events: ['deal.created'] }) });
  if (sub.status !== 201) throw new Error(`cannot subscribe: ${sub.status} ${await sub.text()}`);
  const body = JSON.stringify({ title: 'Webhook benchmark', amount: 1000, currency: 'EUR' });

  process.stdout.write(`writing ${EVENTS} events through the API (no worker running)... `);
  await load(`${api.url}/v1/deals`, tokens, 120, { method: 'POST', body, amount: EVENTS });
  console.log('done');

  // The embedded default's worker is the server's own (WORKER=inline: a separate worker has no
  // Redis to hear writes by, and polls): the server that wrote the burst gives way to one with
  // its worker, as a restart would; timed from when it listens (start-up is not delivery).
  const started = await startDelivering();
  await waitForArrivals(EVENTS, 120_000);
  const seconds = (arrivals[arrivals.length - 1]!.at - started) / 1000;
  const throughput = EVENTS / seconds;

  // Straight on, as a user would meet it: the database is still digesting the burst.
  arrivals.length = 0;
  const duration = 10;
  process.stdout.write(`writing at ${RATE}/s for ${duration} s with the worker running... `);
  const written = await load(`${api.url}/v1/deals`, tokens, duration, { method: 'POST', body, connections: 10, overallRate: RATE });
  await waitForArrivals(written.total, 30_000);
  console.log('done');
  const latencies = arrivals.map((a) => a.at - a.createdAt).sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;

  console.log('\nWebhook deliveries, one worker (%s), %s, %s', EMBEDDED ? 'the inline worker of the server' : 'a worker process', BACKEND, nats ? 'to NATS JetStream (acknowledged publishes)' : 'receiver answering 200 at once');
  console.log('  %d events delivered in %s s: %s deliveries/s   (target >= 2000: %s)', EVENTS, seconds.toFixed(2), fmt(throughput), throughput >= 2000 ? 'met' : 'MISSED');
  console.log('  commit -> arrival over %d deliveries at %d writes/s, right after the burst:', latencies.length, RATE);
  console.log('    p50 %d ms   (target < 50: %s)', pct(50), pct(50) < 50 ? 'met' : 'MISSED');
  console.log('    p99 %d ms   (target < 250: %s)', pct(99), pct(99) < 250 ? 'met' : 'MISSED');
  console.log('    max %d ms', latencies[latencies.length - 1]);
  if (process.env.BENCH_DEBUG) {
    // When the slow deliveries were written (ms into the run) and how long each took.
    const t0 = Math.min(...arrivals.map((a) => a.createdAt));
    console.log(arrivals.filter((a) => a.at - a.createdAt > 300).map((a) => `${a.createdAt - t0}+${a.at - a.createdAt}`).join(' '));
  }
}

try {
  await (process.env.BENCH_ORDERING ? compareOrdering() : throughputAndLatency());
} finally {
  worker?.child.kill('SIGTERM');
  api.child.kill('SIGTERM');
  receiver.close();
  if (nats) {
    await (await nats.jetstreamManager()).streams.delete(subject.replace(/\./g, '_'));
    await nats.close();
  }
}
