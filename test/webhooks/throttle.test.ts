import { expect } from 'chai';
import { burstOf, takeTokens } from '../../src/webhooks/throttle.js';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';
import { startReceiver, verified, type Receiver } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

const FAST = fastWebhooks();

describe('max_deliveries_per_second (two workers, one shared bucket)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let workers: Worker[];
  let receiver: Receiver;
  let token: string;

  before(async () => {
    receiver = await startReceiver();
    app = await startApp({ env: FAST });
    workers = [startWorker(app.deps), startWorker(app.deps)];
    ({ token } = await app.workspaceWithKey());
  });
  after(async () => {
    for (const w of workers) await w.stop();
    await app.close();
    await receiver.close();
  });

  async function subscribe(path: string, json: Record<string, unknown> = {}): Promise<{ id: string; secret: string; max_deliveries_per_second: number | null }> {
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}${path}`, events: ['deal.*'], ...json } });
    expect(res.status, await res.clone().text()).to.equal(201);
    const sub = (await res.json()) as { id: string; secret: string; max_deliveries_per_second: number | null };
    receiver.secrets.set(path, [sub.secret]);
    return sub;
  }

  it('keeps one subscription to 5 a second across both workers, drops none, and does not slow another', async () => {
    const slow = await subscribe('/slow', { max_deliveries_per_second: 5 });
    expect(slow.max_deliveries_per_second).to.equal(5);
    const fast = await subscribe('/fast');
    expect(fast.max_deliveries_per_second).to.equal(null);

    const written = new Map<string, number>();
    for (let i = 0; i < 30; i += 1) {
      const res = await app.request('/v1/deals', { token, method: 'POST', json: { title: `throttled ${i}` } });
      written.set(((await res.json()) as { id: string }).id, Date.now());
    }

    // The other subscription: everything within its usual second, while the slow one is still going.
    const fastOnes = await receiver.waitFor(30, (r) => r.path === '/fast', 5_000);
    // All of it while the throttled one was still going: the throttle held back only its own.
    expect(receiver.received.filter((r) => r.path === '/slow').length).to.be.lessThan(30);
    const lags = fastOnes.map((r) => r.at - written.get(verified(fast.secret, r).data.object.id as string)!);
    console.log(`      unthrottled subscription: slowest delivery ${Math.max(...lags)} ms after its write`);

    const slowOnes = await receiver.waitFor(30, (r) => r.path === '/slow', 20_000);
    expect(new Set(slowOnes.map((r) => r.id)).size).to.equal(30);
    const times = slowOnes.map((r) => r.at).sort((a, b) => a - b);
    // Any one second holds at most the rate plus the bucket's burst (one delivery at 5 a second).
    let worst = 0;
    for (let i = 0; i < times.length; i += 1) worst = Math.max(worst, times.filter((t) => t >= times[i]! && t < times[i]! + 1000).length);
    console.log(`      throttled subscription: busiest second ${worst} deliveries, 30 over ${((times[29]! - times[0]!) / 1000).toFixed(1)} s`);
    expect(worst).to.be.at.most(5 + burstOf(5));
    expect(times[29]! - times[0]!).to.be.at.least(((30 - burstOf(5)) / 5) * 1000 - 600);
    await waitFor(async () => {
      const list = (await (await app.request(`/v1/webhooks/${slow.id}/deliveries?limit=100`, { token })).json()) as { data: Array<{ status: string; attempts: number }> };
      return list.data.length === 30 && list.data.every((d) => d.status === 'succeeded' && d.attempts === 1);
    }, 5_000, 'every throttled delivery to succeed at its first attempt');
    expect(receiver.rejected).to.deep.equal([]);
  });

  it('takes the limit off with null, and refuses a limit outside 1-1000', async () => {
    const sub = await subscribe('/limits', { max_deliveries_per_second: 1000 });
    const off = await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { max_deliveries_per_second: null } });
    expect(((await off.json()) as { max_deliveries_per_second: unknown }).max_deliveries_per_second).to.equal(null);
    for (const bad of [0, 1001, 2.5, '5']) {
      await problem(await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { max_deliveries_per_second: bad } }), 422, 'validation_failed');
      await problem(await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/never`, events: ['*'], max_deliveries_per_second: bad } }), 422, 'validation_failed');
    }
    const after = (await (await app.request(`/v1/webhooks/${sub.id}`, { token })).json()) as { max_deliveries_per_second: unknown };
    expect(after.max_deliveries_per_second).to.equal(null);
  });

  it('fills the bucket at the rate, up to its burst', () => {
    expect(takeTokens(undefined, 5, 10, 0)).to.deep.equal({ tokens: 0, granted: 1 });
    expect(takeTokens({ tokens: 0, refilledAt: 0 }, 5, 10, 100).granted).to.equal(0);
    expect(takeTokens({ tokens: 0, refilledAt: 0 }, 5, 10, 200).granted).to.equal(1);
    expect(takeTokens({ tokens: 0, refilledAt: 0 }, 100, 50, 60_000)).to.deep.equal({ tokens: 0, granted: 10 });
    expect(takeTokens({ tokens: 0.5, refilledAt: 1000 }, 5, 1, 900)).to.deep.equal({ tokens: 0.5, granted: 0 });
  });
});
