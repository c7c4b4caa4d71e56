import { expect } from 'chai';
import { dialectOf } from '../../src/db/dialect.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { startServer, startWorkerProcess, type WorkerProcess } from '../helpers/processes.js';
import { checkedFetcher, contractOf } from '../helpers/contract.js';
import { startReceiver, verified, type Receiver } from '../helpers/receiver.js';

const WORKER_ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_LEASE_SECONDS: '3', WEBHOOK_TIMEOUT_SECONDS: '1', WEBHOOK_CONCURRENCY: '20', WEBHOOK_RETRY_DELAYS: '0.5,0.5,0.5' };

describe('delivery worker processes', function () {
  this.timeout(90_000);
  let app: TestApp;
  let receiver: Receiver;
  let token: string;
  const workers: WorkerProcess[] = [];

  /** A subscription to everything at its own path, and `count` events written through the API. */
  async function batch(path: string, count: number): Promise<{ secret: string; subscriptionId: string; eventIds: Set<string> }> {
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}${path}`, events: ['client.created'] } });
    const sub = (await res.json()) as { id: string; secret: string };
    receiver.secrets.set(path, [sub.secret]);
    const ids: string[] = [];
    for (let i = 0; i < count; i += 25) {
      const made = await Promise.all(Array.from({ length: Math.min(25, count - i) }, (_, j) => app.request('/v1/clients', { token, method: 'POST', json: { name: `Batch ${path} ${i + j}` } })));
      for (const r of made) ids.push(((await r.json()) as { id: string }).id);
    }
    const events = (await app.deps.db('events').select('id').whereIn('object_id', ids)) as Array<{ id: string }>;
    expect(events).to.have.length(count);
    return { secret: sub.secret, subscriptionId: sub.id, eventIds: new Set(events.map((e) => e.id)) };
  }

  const distinct = (path: string) => new Set(receiver.received.filter((r) => r.path === path).map((r) => r.id));

  before(async () => {
    receiver = await startReceiver(() => ({ delayMs: 40 }));
    app = await startApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    receiver.contract = await contractOf(app.url);
    ({ token } = await app.workspaceWithKey({ plan: 'enterprise' }));
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop('SIGKILL')));
    // Every delivery that arrived verified with standardwebhooks against its subscription's secret.
    expect(receiver.rejected).to.deep.equal([]);
  });
  after(async () => {
    await app.close();
    await receiver.close();
  });

  it('loses nothing when a worker is killed -9 mid-batch of 1,000: another picks up its claims', async () => {
    const { secret, subscriptionId, eventIds } = await batch('/crash', 1000);
    const first = await startWorkerProcess(WORKER_ENV);
    workers.push(first);
    await waitFor(() => distinct('/crash').size >= 150, 30_000, '150 deliveries before the crash');
    first.child.kill('SIGKILL');
    await first.exited;
    const before = distinct('/crash').size;
    expect(before).to.be.lessThan(1000);
    workers.push(await startWorkerProcess(WORKER_ENV));
    await waitFor(() => distinct('/crash').size >= 1000, 60_000, 'all 1,000 deliveries');
    const got = distinct('/crash');
    for (const id of eventIds) expect(got.has(id), `delivery of ${id}`).to.equal(true);
    for (const r of receiver.received.filter((x) => x.path === '/crash').slice(0, 50)) verified(secret, r);
    await waitFor(async () => {
      const pending = (await app.deps.db('webhook_deliveries').where({ subscription_id: subscriptionId }).whereNot('status', 'succeeded').count({ n: '*' }).first()) as { n: number | string };
      return Number(pending.n) === 0;
    }, 10_000, 'every delivery recorded as succeeded');
  });

  it('two workers side by side never send the same delivery twice', async () => {
    const { subscriptionId, eventIds } = await batch('/pair', 1000);
    workers.push(...(await Promise.all([startWorkerProcess(WORKER_ENV), startWorkerProcess(WORKER_ENV)])));
    await waitFor(() => distinct('/pair').size >= 1000, 60_000, 'all 1,000 deliveries');
    // Every delivery recorded as succeeded is the signal that no worker holds one to send again.
    await waitFor(async () => {
      const done = (await app.deps.db('webhook_deliveries').where({ subscription_id: subscriptionId, status: 'succeeded' }).count({ n: '*' }).first()) as { n: number | string };
      return Number(done.n) === 1000;
    }, 10_000, 'every delivery recorded');
    const got = receiver.received.filter((r) => r.path === '/pair');
    expect(got).to.have.length(1000);
    expect(new Set(got.map((r) => r.id))).to.deep.equal(eventIds);
    const attempts = (await app.deps.db('webhook_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').where('d.subscription_id', subscriptionId).count({ n: '*' }).first()) as { n: number | string };
    expect(Number(attempts.n)).to.equal(1000);
  });

  it('three workers, six subscriptions, failures and retries while events keep coming: no deadlock, and every send recorded', async function () {
    const dialect = dialectOf(app.deps.db);
    const deadlocks = async () => {
      if (dialect === 'mysql') return Number(((await app.deps.db.raw("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'")) as [Array<{ Value: string }>])[0][0]?.Value);
      if (dialect === 'postgres') return Number(((await app.deps.db.raw('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')) as { rows: Array<{ deadlocks: number }> }).rows[0]?.deadlocks);
      return 0;
    };
    const before = await deadlocks();
    // Half the subscriptions fail each delivery's first attempt: the worker then updates their
    // failure streak (an X lock on the subscription row) while fan-out inserts deliveries for
    // them (a shared lock on the same rows, through the foreign key).
    const seen = new Set<string>();
    receiver.respond = (r) => {
      if (!r.path.startsWith('/dl/')) return { delayMs: 40 };
      const n = Number(r.path.slice(4));
      const first = !seen.has(`${r.path}${r.id}`);
      seen.add(`${r.path}${r.id}`);
      return n >= 3 && first ? { status: 500 } : {};
    };
    const subscriptions: string[] = [];
    for (let n = 0; n < 6; n++) {
      const sub = (await (await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/dl/${n}`, events: ['client.created'] } })).json()) as { id: string; secret: string };
      receiver.secrets.set(`/dl/${n}`, [sub.secret]);
      subscriptions.push(sub.id);
    }
    // A timeout and a lease long enough that none runs out under load (this process writes and
    // receives at once): a send repeated after one is allowed (at least once), but not what this tests.
    workers.push(...(await Promise.all([1, 2, 3].map(() => startWorkerProcess({ ...WORKER_ENV, WEBHOOK_TIMEOUT_SECONDS: '10', WEBHOOK_LEASE_SECONDS: '30', WEBHOOK_RETRY_DELAYS: '0.2,0.2,0.2' })))));
    const events = 1000;
    for (let i = 0; i < events; i += 25) {
      await Promise.all(Array.from({ length: 25 }, (_, j) => app.request('/v1/clients', { token, method: 'POST', json: { name: `Deadlock ${i + j}` } })));
    }
    const expected = events * 6 + events * 3;
    await waitFor(async () => {
      const done = (await app.deps.db('webhook_deliveries').whereIn('subscription_id', subscriptions).where('status', 'succeeded').count({ n: '*' }).first()) as { n: number | string };
      return Number(done.n) === events * 6;
    }, 80_000, 'every delivery succeeded');
    const sent = receiver.received.filter((r) => r.path.startsWith('/dl/')).length;
    const attempts = (await app.deps.db('webhook_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').whereIn('d.subscription_id', subscriptions).count({ n: '*' }).first()) as { n: number | string };
    // Every send has its attempt row, and nothing was sent twice for want of one.
    expect({ sent, recorded: Number(attempts.n) }).to.deep.equal({ sent: expected, recorded: expected });
    expect(new Set(receiver.received.filter((r) => r.path.startsWith('/dl/')).map((r) => `${r.path} ${r.id}`)).size).to.equal(events * 6);
    const output = workers.map((w) => w.output()).join('\n');
    expect(output).not.to.match(/ER_LOCK_DEADLOCK|deadlock|cannot record|worker cycle failed/i);
    expect(await deadlocks()).to.equal(before);
  });

  it('npm start delivers too, with WORKER=inline, and stops its worker on SIGTERM', async () => {
    const server = await startServer({ WORKER: 'inline', WEBHOOK_ALLOW_PRIVATE: 'true' });
    try {
      const api = await checkedFetcher(server.url);
      const call = (path: string, json: unknown) => api(path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(json) });
      const sub = (await (await call('/v1/webhooks', { url: `${receiver.url}/inline`, events: ['deal.created'] })).json()) as { secret: string };
      receiver.secrets.set('/inline', [sub.secret]);
      const deal = (await (await call('/v1/deals', { title: 'Inline' })).json()) as { id: string };
      const [r] = await receiver.waitFor(1, (x) => x.path === '/inline', 10_000);
      expect((verified(sub.secret, r!).data.object as { id: string }).id).to.equal(deal.id);
    } finally {
      expect(await server.stop('SIGTERM')).to.equal(0);
    }
    expect(server.output()).to.contain('delivery worker stopped');
  });

  it('on SIGTERM finishes the attempts in flight, records them, and exits 0', async () => {
    receiver.respond = (r) => (r.path === '/term' ? { delayMs: 700 } : { delayMs: 40 });
    const { subscriptionId } = await batch('/term', 10);
    const worker = await startWorkerProcess(WORKER_ENV);
    workers.push(worker);
    await waitFor(() => receiver.received.filter((r) => r.path === '/term').length >= 10, 10_000, 'ten attempts in flight');
    const stoppedAt = Date.now();
    expect(await worker.stop('SIGTERM')).to.equal(0);
    // It finished what was in flight, not waiting out its leases (60 s).
    expect(Date.now() - stoppedAt).to.be.lessThan(30_000);
    const rows = (await app.deps.db('webhook_deliveries').where({ subscription_id: subscriptionId })) as Array<{ status: string; lease_owner: string | null; attempts: number }>;
    expect(rows).to.have.length(10);
    for (const row of rows) expect(row).to.deep.include({ status: 'succeeded', lease_owner: null, attempts: 1 });
  });
});
