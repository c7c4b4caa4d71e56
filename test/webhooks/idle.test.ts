import { expect } from 'chai';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, type TestApp } from '../helpers/app.js';
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
});
