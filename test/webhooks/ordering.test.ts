import { expect } from 'chai';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { internal, person } from '../helpers/admin.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { contractOf } from '../helpers/contract.js';
import { problem } from '../helpers/problem.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/processes.js';
import { startReceiver, type Receiver, type Received } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

type Delivery = { id: string; event_id: string; status: string; attempts: number; held_behind: string | null };
type Sub = { id: string; secret: string; ordering: string };

/** Ten retries 0.2 s apart: a line waits behind a failing delivery as long as a test needs. */
const FAST = fastWebhooks({ WEBHOOK_RETRY_DELAYS: Array.from({ length: 10 }, () => '0.2').join(',') });

/** An arrival's object and version (data.object). */
const objectOf = (r: Received) => {
  const event = JSON.parse(r.body) as { data: { object: { id: string; version: number } } };
  return { id: event.data.object.id, version: event.data.object.version };
};

/**
 * Each object's deliveries as the receiver answered them 2xx, in the order they arrived: an
 * object's versions must rise (a delivery sent again after a crash may repeat the one before,
 * never come after a later one).
 */
function expectInOrder(accepted: Received[]): Map<string, number[]> {
  const byObject = new Map<string, number[]>();
  for (const r of accepted) {
    const { id, version } = objectOf(r);
    const seen = byObject.get(id) ?? [];
    const last = seen[seen.length - 1];
    if (last !== undefined) expect(version, `object ${id}: version ${version} after ${seen.join(',')}`).to.be.at.least(last);
    if (last !== version) seen.push(version);
    byObject.set(id, seen);
  }
  return byObject;
}

describe('ordered delivery: ordering "per_object" (a real receiver, real workers)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let receiver: Receiver;
  let token: string;
  let paths = 0;
  /** What the receiver answered 2xx, in arrival order. */
  let accepted: Received[] = [];
  /** Decides a request's status (200 unless it says otherwise). */
  let statusOf: (r: Received) => number = () => 200;

  async function subscribe(ordering?: string): Promise<Sub & { path: string }> {
    const path = `/ordered${++paths}`;
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: receiver.url + path, events: ['client.*'], ...(ordering ? { ordering } : {}) } });
    expect(res.status, await res.clone().text()).to.equal(201);
    const sub = (await res.json()) as Sub;
    receiver.secrets.set(path, [sub.secret]);
    return { ...sub, path };
  }

  /** `objects` new clients. */
  async function create(objects: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < objects; i++) ids.push(((await (await app.request('/v1/clients', { token, method: 'POST', json: { name: `Ordered ${i}` } })).json()) as { id: string }).id);
    return ids;
  }

  /** Each client renamed `updates` times, the objects' writes interleaved. */
  async function update(ids: string[], updates: number): Promise<void> {
    for (let u = 1; u <= updates; u++) {
      await Promise.all(ids.map(async (id) => expect((await app.request(`/v1/clients/${id}`, { token, method: 'PATCH', json: { name: `Ordered ${id} ${u}` } })).status).to.equal(200)));
    }
  }

  const deliveries = async (subscriptionId: string, query = '') => ((await (await app.request(`/v1/webhooks/${subscriptionId}/deliveries?limit=200${query}`, { token })).json()) as { data: Delivery[] }).data;
  const arrivals = (path: string) => accepted.filter((r) => r.path === path);

  before(async () => {
    receiver = await startReceiver((r) => {
      const status = statusOf(r);
      if (status < 300) accepted.push(r);
      return { status };
    });
    // TRUST_PROXY: each person signs in from an address of their own (x-forwarded-for), not
    // 127.0.0.1, which the other files' failed sign-ins may have throttled (a limit shared in Redis).
    app = await startApp({ env: { ...FAST, TRUST_PROXY: 'true' } });
    receiver.contract = await contractOf(app.url);
    ({ token } = await app.workspaceWithKey({ plan: 'enterprise' }));
  });
  beforeEach(() => {
    accepted = [];
    statusOf = () => 200;
  });
  afterEach(() => {
    expect(receiver.rejected).to.deep.equal([]);
  });
  after(async () => {
    await app.close();
    await receiver.close();
  });

  it('takes ordering on creation and update (none by default) in both APIs, and refuses anything else with 422, changing nothing', async () => {
    const plain = await subscribe();
    expect(plain.ordering).to.equal('none');
    const ordered = await subscribe('per_object');
    expect(ordered.ordering).to.equal('per_object');
    const patched = await app.request(`/v1/webhooks/${plain.id}`, { token, method: 'PATCH', json: { ordering: 'per_object' } });
    expect(((await patched.json()) as Sub).ordering).to.equal('per_object');

    const before = (await app.deps.db('webhook_subscriptions').count({ n: '*' }).first()) as { n: number | string };
    const refused = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/x`, events: ['*'], ordering: 'fifo' } });
    expect((await problem(refused, 422, 'validation_failed')).errors?.[0]?.pointer).to.equal('/ordering');
    const after = (await app.deps.db('webhook_subscriptions').count({ n: '*' }).first()) as { n: number | string };
    expect(Number(after.n)).to.equal(Number(before.n));
    const refusedUpdate = await app.request(`/v1/webhooks/${ordered.id}`, { token, method: 'PATCH', json: { ordering: 'per_object_strict' } });
    expect(refusedUpdate.status).to.equal(422);
    expect(((await (await app.request(`/v1/webhooks/${ordered.id}`, { token })).json()) as Sub).ordering).to.equal('per_object');

    const admin = await person(app, { plan: 'enterprise' });
    const made = await internal(app, '/webhooks', { method: 'POST', cookie: admin.cookie, json: { url: `${receiver.url}/internal`, events: ['*'], ordering: 'per_object' } });
    expect(made.status).to.equal(201);
    const hook = (await made.json()) as Sub;
    expect(hook.ordering).to.equal('per_object');
    const moved = await internal(app, `/webhooks/${hook.id}`, { method: 'PATCH', cookie: admin.cookie, json: { ordering: 'none' } });
    expect(((await moved.json()) as Sub).ordering).to.equal('none');
    expect((await internal(app, `/webhooks/${hook.id}`, { method: 'PATCH', cookie: admin.cookie, json: { ordering: 'random' } })).status).to.equal(422);
  });

  it("keeps each object's order through retries, holding only the failing object's line, which says what it waits behind", async () => {
    const sub = await subscribe('per_object');
    let failing = true;
    let stuck = '';
    // The first object's second version fails until let go; every 7th request fails once more.
    let n = 0;
    statusOf = (r) => {
      const { id, version } = objectOf(r);
      if (id === stuck && version === 2 && failing) return 503;
      return ++n % 7 === 0 ? 500 : 200;
    };
    const worker: Worker = startWorker(app.deps);
    try {
      const ids = await create(4);
      stuck = ids[0]!;
      await update(ids, 4);
      // The other three objects' lines run to the end while the first is held at version 2.
      await waitFor(() => ids.slice(1).every((id) => arrivals(sub.path).filter((r) => objectOf(r).id === id).length >= 5), 30_000, 'the other lines delivered');
      const held = await deliveries(sub.id, '&status=held');
      expect(held.length).to.be.at.least(1);
      const head = (await deliveries(sub.id)).find((d) => d.status === 'pending' && held.some((h) => h.held_behind === d.id));
      expect(head, 'the held deliveries name the one being retried').to.not.equal(undefined);
      expect(arrivals(sub.path).filter((r) => objectOf(r).id === stuck).map((r) => objectOf(r).version)).to.deep.equal([1]);
      // Prometheus: the held line's age, by subscription.
      const metrics = await app.deps.metrics.registry.metrics();
      const age = new RegExp(`^wsapi_webhook_oldest_pending_age_seconds\\{webhook="${sub.id}"\\} ([0-9.e-]+)$`, 'm').exec(metrics);
      expect(Number(age?.[1]), 'the oldest pending age of the subscription').to.be.greaterThan(0);
      failing = false;
      await waitFor(() => arrivals(sub.path).filter((r) => objectOf(r).id === stuck).length >= 5, 30_000, 'the held line delivered');
      const lines = expectInOrder(arrivals(sub.path));
      for (const id of ids) expect(lines.get(id)).to.deep.equal([1, 2, 3, 4, 5]);
      expect(await deliveries(sub.id, '&status=held')).to.deep.equal([]);
    } finally {
      await worker.stop();
    }
  });

  it('leaves a held delivery held when retried (it does not jump its line), and retention keeps held deliveries and their events', async () => {
    const sub = await subscribe('per_object');
    statusOf = () => 503;
    // Retries a second apart: the first stays failing (and the rest held) while the test looks.
    const worker: Worker = startWorker({ ...app.deps, config: { ...app.deps.config, webhookRetryDelays: Array.from({ length: 20 }, () => 1) } });
    try {
      const [id] = await create(1);
      await update([id!], 2);
      await waitFor(async () => (await deliveries(sub.id, '&status=held')).length === 2, 15_000, 'two deliveries held behind the failing first');
      const [held] = await deliveries(sub.id, '&status=held');
      const retried = await app.request(`/v1/webhooks/${sub.id}/deliveries/${held!.id}/retry`, { token, method: 'POST' });
      expect(retried.status).to.equal(202);
      expect(((await retried.json()) as Delivery).status).to.equal('held');
      const row = (await app.deps.db('webhook_deliveries').where({ id: held!.id }).first('status', 'attempts')) as { status: string; attempts: number | string };
      expect(row.status).to.equal('held');
      expect(Number(row.attempts)).to.equal(0);
      // A sweep as if the retention window had passed long ago: the line and its events stay.
      const { sweepRetention } = await import('../../src/events/retention.js');
      const eventIds = (await deliveries(sub.id)).map((d) => d.event_id);
      await sweepRetention(app.deps.db, Date.now() + 400 * 24 * 3600 * 1000, app.deps.config.retentionMs, { pauseMs: 0 });
      expect((await deliveries(sub.id, '&status=held')).map((d) => d.id)).to.include(held!.id);
      expect(Number(((await app.deps.db('events').whereIn('id', eventIds).count({ n: '*' }).first()) as { n: number | string }).n)).to.equal(3);
      // Once the receiver answers, the line goes in order, the retried one in its turn.
      statusOf = () => 200;
      await waitFor(() => arrivals(sub.path).length >= 3, 30_000, 'the line delivered');
      expect(expectInOrder(arrivals(sub.path)).get(id!)).to.deep.equal([1, 2, 3]);
    } finally {
      await worker.stop();
    }
  });

  it("does not release a line's next delivery while an earlier event of its object still waits for the fan-out", async () => {
    const sub = await subscribe('per_object');
    const { fanOut } = await import('../../src/webhooks/fanout.js');
    const { releaseLines } = await import('../../src/webhooks/ordering.js');
    const db = app.deps.db;
    const [id] = await create(1);
    await update([id!], 1);
    // No worker: the fan-out by hand makes the line, its first delivery pending and the second held.
    while ((await fanOut(db, Date.now(), 100, 3)).events > 0);
    const line = (await db('webhook_deliveries').where({ subscription_id: sub.id }).orderBy('line_seq').select('id', 'status', 'event_id', 'line_seq')) as Array<{ id: string; status: string; event_id: string; line_seq: number | string }>;
    expect(line.map((d) => d.status)).to.deep.equal(['pending', 'held']);
    // The first is done, but an earlier event of the object (as its seq says) is still to be fanned out.
    await db('webhook_deliveries').where({ id: line[0]!.id }).update({ status: 'succeeded', line_seq: null, next_attempt_at: null });
    const created = (await db('events').where({ id: line[0]!.event_id }).first('id', 'workspace_id', 'type', 'object_id', 'created_at')) as { id: string; workspace_id: string; type: string; object_id: string; created_at: number };
    await db('events_pending').insert({ event_id: created.id, workspace_id: created.workspace_id, type: created.type, object_id: created.object_id, created_at: created.created_at });
    const line2 = { subscription_id: sub.id, object_id: id! };
    try {
      expect(await releaseLines(db, [line2], Date.now(), { owner: 'test', leaseMs: 60_000, limit: 5 })).to.deep.equal([]);
      // Nor without a worker to hand it to.
      expect(await releaseLines(db, [line2], Date.now())).to.deep.equal([]);
      expect(((await db('webhook_deliveries').where({ id: line[1]!.id }).first('status')) as { status: string }).status).to.equal('held');
    } finally {
      await db('events_pending').where({ event_id: created.id }).delete();
    }
    // Nothing waits any more: released, and handed to the worker that asks.
    expect((await releaseLines(db, [line2], Date.now(), { owner: 'test', leaseMs: 60_000, limit: 5 })).map((job) => job.delivery.id)).to.deep.equal([line[1]!.id]);
    expect(await db('webhook_deliveries').where({ id: line[1]!.id }).first('status', 'lease_owner')).to.deep.equal({ status: 'pending', lease_owner: 'test' });
  });

  it('moves on past a delivery given up after its last retry, and recovery sends the given-up ones again in order', async () => {
    const sub = await subscribe('per_object');
    const started = new Date(Date.now() - 1000).toISOString();
    let down = true;
    statusOf = () => (down ? 500 : 200);
    // Two retries: each version is given up after its third attempt.
    const worker: Worker = startWorker({ ...app.deps, config: { ...app.deps.config, webhookRetryDelays: [0.2, 0.2] } });
    try {
      const [id] = await create(1);
      await update([id!], 3);
      // Every version is tried 3 times and given up, one after the other.
      await waitFor(async () => (await deliveries(sub.id, '&status=failed')).length === 4, 30_000, 'four deliveries given up').catch(async (err: Error) => {
        throw new Error(`${err.message}: ${JSON.stringify(await app.deps.db('webhook_deliveries').where({ subscription_id: sub.id }).select('status', 'attempts', 'retries_left', 'event_seq', 'next_attempt_at'))}`);
      });
      const attempts = await app.deps.db('webhook_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').where('d.subscription_id', sub.id).orderBy('a.id').select('d.event_seq', 'a.attempt');
      const order = (attempts as Array<{ event_seq: number | string }>).map((a) => Number(a.event_seq));
      expect(order).to.deep.equal([...order].sort((a, b) => a - b), 'attempts in the order of the object');
      down = false;
      const res = await app.request(`/v1/webhooks/${sub.id}/recover`, { token, method: 'POST', json: { since: started } });
      expect(((await res.json()) as { deliveries: number }).deliveries).to.equal(4);
      await waitFor(() => arrivals(sub.path).length >= 4, 30_000, 'the recovered line');
      expect(expectInOrder(arrivals(sub.path)).get(id!)).to.deep.equal([1, 2, 3, 4]);
    } finally {
      await worker.stop();
    }
  });

  it('keeps the order with two worker processes, and when one is killed -9 mid-line (its lease runs out)', async () => {
    const sub = await subscribe('per_object');
    const env = { ...FAST, WEBHOOK_LEASE_SECONDS: '2', WEBHOOK_CONCURRENCY: '20' };
    // Slow answers, some failing once: the workers' claims overlap in time.
    let n = 0;
    statusOf = () => (++n % 5 === 0 ? 500 : 200);
    const ids = await create(10);
    await update(ids, 9);
    const workers: WorkerProcess[] = await Promise.all([startWorkerProcess(env), startWorkerProcess(env)]);
    try {
      await waitFor(() => arrivals(sub.path).length >= 30, 30_000, 'some deliveries');
      workers[0]!.child.kill('SIGKILL');
      await workers[0]!.exited;
      workers.push(await startWorkerProcess(env));
      await waitFor(() => new Set(arrivals(sub.path).map((r) => r.id)).size >= 100, 60_000, 'all 100 deliveries').catch(async (err: Error) => {
        const states = await app.deps.db('webhook_deliveries').where({ subscription_id: sub.id }).select('status').count({ n: '*' }).groupBy('status');
        throw new Error(`${err.message}: ${JSON.stringify(states)}`);
      });
      const lines = expectInOrder(arrivals(sub.path));
      for (const id of ids) expect(lines.get(id)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    } finally {
      await Promise.all(workers.slice(1).map((w) => w.stop('SIGKILL')));
    }
  });
});
