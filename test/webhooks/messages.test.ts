import { expect } from 'chai';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { capturedLog } from '../helpers/log.js';
import { problem } from '../helpers/problem.js';
import { startServer } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

describe('webhook messages that teach', () => {
  it('a refused URL says what is allowed and how to test with a local receiver', async () => {
    const app = await startApp();
    try {
      const { token } = await app.workspaceWithKey();
      for (const url of ['http://hooks.example.com/', 'https://127.0.0.1:9/hook']) {
        const body = await problem(await app.request('/v1/webhooks', { token, method: 'POST', json: { url, events: ['*'] } }), 422, 'validation_failed');
        expect(body.errors?.[0]?.message, url).to.match(/(https, nats, tls \(NATS over TLS\), amqp or amqps URL|public addresses only); to test with a receiver on this machine or a private network, the operator sets WEBHOOK_ALLOW_PRIVATE=true \(development only\)$/);
      }
    } finally {
      await app.close();
    }
  });

  it('the server warns once at start-up while WEBHOOK_ALLOW_PRIVATE is on, and not otherwise', async () => {
    for (const [allow, count] of [['true', 1], ['false', 0]] as const) {
      const server = await startServer({ WEBHOOK_ALLOW_PRIVATE: allow });
      const lines = server.output().split('\n').filter((l) => l.includes('WEBHOOK_ALLOW_PRIVATE=true: webhooks may reach'));
      expect(await server.stop()).to.equal(0);
      expect(lines, allow).to.have.length(count);
    }
  });

  describe('each failed attempt in the log', () => {
    let app: TestApp;
    let receiver: Receiver;
    let worker: Worker;
    const captured = capturedLog();
    before(async () => {
      receiver = await startReceiver(() => ({ status: 500, body: 'receiver secret body' }));
      app = await startApp({ log: captured.log, env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS: '0.2' } });
      worker = startWorker(app.deps);
    });
    after(async () => {
      await worker.stop();
      await app.close();
      await receiver.close();
    });

    it('names the subscription, the delivery, the status and the next attempt, never the secret or the body', async () => {
      const { token } = await app.workspaceWithKey();
      const sub = (await (await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/fail`, events: ['lead.created'] } })).json()) as { id: string; secret: string };
      receiver.secrets.set('/fail', [sub.secret]);
      await app.request('/v1/leads', { token, method: 'POST', json: { name: 'Logged' } });
      await waitFor(() => captured.lines().filter((l) => String(l.msg).startsWith('delivery attempt failed')).length >= 2, 10_000, 'two failed attempts logged');
      const [first, last] = captured.lines().filter((l) => String(l.msg).startsWith('delivery attempt failed'));
      expect(first).to.include({ msg: 'delivery attempt failed; will retry', subscription: sub.id, event_type: 'lead.created', attempt: 1, status: 500, error: 'answered 500' });
      expect(String(first?.delivery)).to.match(/^dlv_/);
      expect(Date.parse(String(first?.next_attempt_at))).to.be.greaterThan(Date.now() - 5000);
      expect(last).to.include({ msg: 'delivery attempt failed; no retries left', attempt: 2, next_attempt_at: null });
      const all = JSON.stringify(captured.lines());
      expect(all).not.to.contain(sub.secret.slice(6));
      expect(all).not.to.contain('receiver secret body');
      expect(all).not.to.contain('"Logged"');
    });
  });
});
