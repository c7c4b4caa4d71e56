import { expect } from 'chai';
import { pino } from 'pino';
import { createNotifier, type Notifier } from '../../src/events/notify.js';
import { pgChannel } from '../../src/events/pg-channel.js';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { backend } from '../helpers/backend.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

/**
 * PostgreSQL without Redis: the outbox signal crosses processes by LISTEN/NOTIFY
 * (events/pg-channel.ts), so a separate worker sleeps instead of polling every 100 ms, and wakes
 * for another process's writes.
 */
describe('the outbox signal on PostgreSQL without Redis (LISTEN/NOTIFY)', function () {
  this.timeout(60_000);
  let app: TestApp;
  const notifiers: Notifier[] = [];

  before(async function () {
    if (backend().kind !== 'postgres') this.skip();
    app = await startApp({ env: { REDIS_URL: '', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  });
  after(async () => {
    for (const notifier of notifiers) await notifier.close();
    await app?.close();
  });

  const notifier = () => {
    const config = app.deps.config.database;
    if (config.client !== 'postgres') throw new Error('not on PostgreSQL');
    const made = createNotifier(pgChannel(config.url, app.deps.db, pino({ level: 'silent' })));
    notifiers.push(made);
    return made;
  };

  it('is what a process without Redis uses on PostgreSQL: a signal of one notifier reaches another, on its own connection', async () => {
    expect(app.deps.redis).to.equal(undefined);
    const listener = notifier();
    let heard = 0;
    listener.subscribe(() => (heard += 1));
    await waitFor(() => listener.crossProcess(), 10_000, 'the listener to LISTEN');
    // The app's own notifier is another channel with another listening connection.
    app.deps.notifier.notify();
    await waitFor(() => heard >= 1, 10_000, 'the signal from the other notifier');
    const sessions = (await app.deps.db.raw("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'workspace-api listen' AND datname = current_database()")) as { rows: Array<{ n: number }> };
    expect(sessions.rows[0]?.n).to.be.at.least(1);
  });

  it('listens again after its connection is lost (terminated by the server), and hears the signals after that', async () => {
    const listener = notifier();
    let heard = 0;
    listener.subscribe(() => (heard += 1));
    await waitFor(() => listener.crossProcess(), 10_000, 'the listener to LISTEN');
    const killed = (await app.deps.db.raw("SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = 'workspace-api listen' AND datname = current_database()")) as { rows: Array<{ done: boolean }> };
    expect(killed.rows.length).to.be.at.least(1);
    await waitFor(() => !listener.crossProcess(), 10_000, 'the listener to notice');
    await waitFor(() => listener.crossProcess(), 10_000, 'the listener to LISTEN again');
    const before = heard;
    const sender = notifier();
    sender.notify();
    await waitFor(() => heard > before, 10_000, 'a signal after the reconnection');
  });

  describe('a separate worker', () => {
    let worker: Worker | undefined;
    let own: TestApp | undefined;
    let receiver: Receiver | undefined;
    before(async function () {
      if (backend().kind !== 'postgres') this.skip();
      receiver = await startReceiver();
      // The worker's process: deps of its own (another notifier, another pool), no Redis.
      own = await startApp({ env: { REDIS_URL: '', WEBHOOK_ALLOW_PRIVATE: 'true' } });
      worker = startWorker(own.deps, { inline: false });
      await waitFor(() => own!.deps.notifier.crossProcess(), 10_000, 'the worker to LISTEN');
      statements = [];
      own.deps.db.on('query', (q: { sql: string }) => statements.push(q.sql));
    });
    // Stopped before the other tests of the run, whose deliveries in this database it would claim.
    after(async () => {
      await worker?.stop();
      await own?.close();
      await receiver?.close();
    });
    let statements: string[] = [];

    it('sleeps between signals (no poll every 100 ms), and delivers another process\'s write', async () => {
      const { token } = await app.workspaceWithKey();
      const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver!.url}/pg-listen`, events: ['client.created'] } });
      expect(res.status).to.equal(201);
      statements = [];
      await new Promise((r) => setTimeout(r, 2000));
      // A cycle is 7 statements, one a second with the signal; polling every 100 ms would be some 20 cycles, 140 statements.
      expect(statements.length, statements.join('\n')).to.be.at.most(42);
      expect((await app.request('/v1/clients', { token, method: 'POST', json: { name: 'Heard through NOTIFY' } })).status).to.equal(201);
      const [delivery] = await receiver!.waitFor(1, (r) => r.path === '/pg-listen', 10_000);
      expect(delivery?.body).to.include('Heard through NOTIFY');
    });
  });
});
