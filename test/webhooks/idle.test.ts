import { expect } from 'chai';
import { GATHER_MS, gatherFor, MAX_GATHER_MS, startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

describe('an inline worker with nothing to do', () => {
  let app: TestApp;
  let worker: Worker;
  let receiver: Receiver;
  let token: string;

  before(async () => {
    receiver = await startReceiver();
    app = await startApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS: '0.5', USAGE_FLUSH_SECONDS: '300' } });
    ({ token } = await app.workspaceWithKey());
    worker = startWorker(app.deps, { inline: true });
  });
  after(async () => {
    await worker.stop();
    await app.close();
    await receiver.close();
  });

  async function statementsDuring(ms: number, action: () => Promise<void> = async () => undefined): Promise<string[]> {
    const statements: string[] = [];
    const listen = (q: { sql: string }) => statements.push(q.sql);
    app.deps.db.on('query', listen);
    try {
      await action();
      await new Promise((r) => setTimeout(r, ms));
    } finally {
      app.deps.db.off('query', listen);
    }
    return statements;
  }

  it('sleeps: no statement for two seconds while idle (a separate worker without Redis polls every 100 ms)', async () => {
    await new Promise((r) => setTimeout(r, 300));
    const idle = await statementsDuring(2000);
    expect(idle, idle.join('\n')).to.have.length.at.most(3);
  });

  it('wakes at once for a write of its process, and for a retry when it comes due', async () => {
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/idle`, events: ['client.created'] } });
    expect(res.status).to.equal(201);
    let first = true;
    receiver.respond = () => (first ? ((first = false), { status: 500 }) : {});
    const written = Date.now();
    expect((await app.request('/v1/clients', { token, method: 'POST', json: { name: 'Wake up' } })).status).to.equal(201);
    const [attempt, retry] = await receiver.waitFor(2, (r) => r.path === '/idle', 10_000);
    // Sooner than the 5 s an idle inline worker sleeps at most (with room for a busy machine).
    expect((attempt?.at ?? Infinity) - written).to.be.below(4000);
    expect((retry?.at ?? Infinity) - (attempt?.at ?? 0)).to.be.within(300, 4500);
    expect(retry?.id).to.equal(attempt?.id);
  });

  it('gathers half a millisecond for each event a round fanned out, from GATHER_MS (10) to MAX_GATHER_MS (25)', () => {
    expect([0, 1, 20, 30, 44, 50, 60, 499].map(gatherFor)).to.deep.equal([10, 10, 10, 15, 22, 25, 25, 25]);
    expect([GATHER_MS, MAX_GATHER_MS]).to.deep.equal([gatherFor(0), gatherFor(500)]);
  });

  it('takes a stream of writes in rounds of many events: a round that found work at most every GATHER_MS, not one a write', async () => {
    const rounds = async () => (await app.deps.metrics.workerRounds.get()).values.filter((v) => v.labels.found !== 'nothing').reduce((n, v) => n + v.value, 0);
    const pending = async () => Number(((await app.deps.db('events_pending').count({ n: '*' }).first()) as { n: number | string }).n);
    await waitFor(async () => (await pending()) === 0, 10_000, 'the events so far fanned out');
    const before = await rounds();
    const started = performance.now();
    for (let i = 0; i < 100; i++) expect((await app.request('/v1/deals', { token, method: 'POST', json: { title: `Stream ${i}` } })).status).to.equal(201);
    const elapsed = performance.now() - started;
    await waitFor(async () => (await pending()) === 0, 10_000, 'the stream fanned out');
    // One round a write would be 100 (what the worker did before it gathered); a slower machine
    // writes more slowly and so allows more rounds, never fewer than it needs.
    const during = (await rounds()) - before;
    expect(during).to.be.at.most(Math.ceil(elapsed / GATHER_MS) + 3);
  });
});
