import { expect } from 'chai';
import { newId } from '../../src/common/ids.js';
import { newDelivery } from '../../src/webhooks/deliveries.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { isolatedDatabase } from '../helpers/backend.js';
import { checkedFetcher } from '../helpers/contract.js';
import { startServer } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { migrateLatest } from '../../src/db/migrate.js';

const PENDING = 50_000;

describe('a backlog of 50,000 deliveries and the inline worker', function () {
  this.timeout(120_000);
  let storage: Awaited<ReturnType<typeof isolatedDatabase>>;
  let seeder: TestApp;
  let receiver: Receiver;
  let token: string;
  let subscriptionId: string;

  before(async () => {
    // A database of its own: the other tests' workers must not see these deliveries.
    storage = await isolatedDatabase('backlog');
    seeder = await startApp({ env: { ...storage.env, WEBHOOK_ALLOW_PRIVATE: 'true' } });
    await migrateLatest(seeder.deps.db, seeder.deps.config.migrationsDirs);
    receiver = await startReceiver(() => ({ delayMs: 5 }));
    const ws = await seeder.workspaceWithKey({ plan: 'enterprise' });
    token = ws.token;
    const sub = (await (await seeder.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/backlog`, events: ['deal.created'] } })).json()) as { id: string; secret: string };
    receiver.secrets.set('/backlog', [sub.secret]);
    subscriptionId = sub.id;
    // Events already fanned out, each with its pending delivery, as a long outage leaves them.
    const now = Date.now();
    const { db } = seeder.deps;
    for (let i = 0; i < PENDING; i += 500) {
      const events = Array.from({ length: Math.min(500, PENDING - i) }, () => {
        const id = newId('evt_');
        const payload = JSON.stringify({ id, type: 'deal.created', created_at: new Date(now).toISOString(), data: { object: { id: newId('deal_') }, previous: {} } });
        return { id, workspace_id: ws.workspaceId, type: 'deal.created', object_id: 'deal_x', payload, created_at: now };
      });
      await db.transaction(async (trx) => {
        await trx('events').insert(events);
        await trx('webhook_deliveries').insert(events.map((e) => newDelivery(ws.workspaceId, subscriptionId, e, 3, now)));
      });
    }
  });
  after(async () => {
    await seeder?.close();
    await receiver?.close();
    await storage?.drop();
  });

  it('answers /v1/health throughout while the worker drains the backlog (its p99 printed; bench:backlog holds the target), and SIGTERM exits 0 with nothing left leased', async () => {
    const server = await startServer({ ...storage.env, WORKER: 'inline', WEBHOOK_ALLOW_PRIVATE: 'true' });
    let code: number | null;
    try {
      const api = await checkedFetcher(server.url);
      await waitFor(() => receiver.received.length >= 500, 20_000, 'the worker to get going');
      const times: number[] = [];
      for (let i = 0; i < 150; i++) {
        const started = performance.now();
        const res = await api('/v1/health', { headers: { authorization: `Bearer ${token}` } });
        expect(res.status).to.equal(200);
        await res.arrayBuffer();
        times.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 20));
      }
      times.sort((a, b) => a - b);
      const p99 = times[Math.floor(times.length * 0.99)] as number;
      const p50 = times[Math.floor(times.length * 0.5)] as number;
      console.log(`      /v1/health under a backlog: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms; ${receiver.received.length} delivered meanwhile`);
      // Every request answered while the backlog still drained; how fast is bench:webhooks' to say.
      expect(receiver.received.length).to.be.lessThan(PENDING);
    } finally {
      const stopping = Date.now();
      code = await server.stop('SIGTERM');
      console.log(`      SIGTERM to exit: ${Date.now() - stopping} ms`);
    }
    expect(code).to.equal(0);
    expect(receiver.rejected).to.deep.equal([]);
    // What was sent before the stop was recorded: nothing left leased to the stopped worker.
    const leased = (await seeder.deps.db('webhook_deliveries').where({ subscription_id: subscriptionId }).whereNotNull('lease_owner').count({ n: '*' }).first()) as { n: number | string };
    expect(Number(leased.n)).to.equal(0);
  });
});
