import { expect } from 'chai';
import { deliveryBody } from '../../src/webhooks/payloads.js';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { contractOf } from '../helpers/contract.js';
import { problem } from '../helpers/problem.js';
import { startReceiver, verified, type Receiver } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

const FAST = fastWebhooks();

type Sub = { id: string; secret: string; payload: string };
type Body = { id: string; type: string; created_at: string; livemode: boolean; data: { object: Record<string, unknown>; previous?: Record<string, unknown> } };

describe('thin payloads (webhooks/payloads.ts)', () => {
  it('cuts the object to its id and version, and keeps the id, type and time of the event', () => {
    const stored = JSON.stringify({ id: 'evt_1', type: 'deal.updated', created_at: '2026-11-26T10:00:00.000Z', data: { object: { id: 'deal_1', title: 'Secret plans', version: 4 }, previous: { title: 'Old' } } });
    expect(deliveryBody('full', stored)).to.equal(stored);
    // An event written before test mode has no livemode: it was live.
    expect(JSON.parse(deliveryBody('thin', stored))).to.deep.equal({ id: 'evt_1', type: 'deal.updated', created_at: '2026-11-26T10:00:00.000Z', livemode: true, data: { object: { id: 'deal_1', version: 4 } } });
    const test = JSON.stringify({ id: 'evt_3', type: 'deal.created', created_at: '2026-11-26T10:00:00.000Z', livemode: false, data: { object: { id: 'deal_2', version: 1, livemode: false }, previous: {} } });
    expect(JSON.parse(deliveryBody('thin', test))).to.deep.include({ livemode: false, data: { object: { id: 'deal_2', version: 1 } } });
    const ping = JSON.stringify({ id: 'evt_2', type: 'webhook.test', created_at: '2026-11-26T10:00:00.000Z', data: { object: { id: 'wh_1', url: 'https://example.com' }, previous: {} } });
    expect(JSON.parse(deliveryBody('thin', ping)).data).to.deep.equal({ object: { id: 'wh_1' } });
  });
});

/** docs/reference.md section 16: a subscription with payload "thin" gets `data.object` = { id, version }. */
describe('payload: "thin" subscriptions, delivered (a worker, a real receiver)', () => {
  let app: TestApp;
  let worker: Worker;
  let receiver: Receiver;
  let token: string;
  let paths = 0;

  async function subscribe(json: Record<string, unknown>): Promise<Sub & { path: string }> {
    const path = `/thin${++paths}`;
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: receiver.url + path, events: ['deal.*'], ...json } });
    expect(res.status, await res.clone().text()).to.equal(201);
    const sub = (await res.json()) as Sub;
    receiver.secrets.set(path, [sub.secret]);
    return { ...sub, path };
  }

  before(async () => {
    receiver = await startReceiver();
    app = await startApp({ env: FAST });
    receiver.contract = await contractOf(app.url);
    worker = startWorker(app.deps);
    ({ token } = await app.workspaceWithKey());
  });
  after(async () => {
    await worker.stop();
    await app.close();
    await receiver.close();
  });
  afterEach(() => {
    // Every delivery verified with standardwebhooks against its secret, and matched the document's webhooks.
    expect(receiver.rejected).to.deep.equal([]);
  });

  it('sends a thin subscription the same events as a full one, each signed, with data.object = { id, version }', async () => {
    const full = await subscribe({});
    const thin = await subscribe({ payload: 'thin' });
    expect(full.payload).to.equal('full');
    expect(thin.payload).to.equal('thin');
    const created = await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Thin or full' } });
    const deal = (await created.json()) as { id: string };
    await app.request(`/v1/deals/${deal.id}`, { token, method: 'PATCH', json: { title: 'Thin, then', stage: 'won' } });
    const fulls = await receiver.waitFor(3, (r) => r.path === full.path);
    const thins = await receiver.waitFor(3, (r) => r.path === thin.path);
    const byId = new Map(fulls.map((r) => [r.id, verified(full.secret, r) as Body]));
    for (const r of thins) {
      const body = verified(thin.secret, r) as Body;
      const whole = byId.get(r.id);
      expect(whole, r.id).to.not.equal(undefined);
      expect(body).to.deep.equal({ id: whole!.id, type: whole!.type, created_at: whole!.created_at, livemode: true, data: { object: { id: deal.id, version: whole!.data.object.version } } });
      expect(r.body).to.not.contain('Thin');
    }
    expect(thins.map((r) => (JSON.parse(r.body) as Body).data.object.version).sort()).to.deep.equal([1, 2, 2]);
    expect([...byId.values()].every((b) => b.data.object.title !== undefined)).to.equal(true);
  });

  it('turns thin (and back) with PATCH, and sends a thin test event with the subscription id only', async () => {
    const sub = await subscribe({});
    const patched = await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { payload: 'thin' } });
    expect(((await patched.json()) as Sub).payload).to.equal('thin');
    expect(((await (await app.request(`/v1/webhooks/${sub.id}`, { token })).json()) as Sub).payload).to.equal('thin');
    expect((await app.request(`/v1/webhooks/${sub.id}/test`, { token, method: 'POST' })).status).to.be.oneOf([200, 201, 202]);
    const [test] = await receiver.waitFor(1, (r) => r.path === sub.path);
    expect((verified(sub.secret, test!) as Body).data).to.deep.equal({ object: { id: sub.id } });
  });

  it('refuses a payload that is neither full nor thin, naming the field, and writes nothing', async () => {
    const before = ((await (await app.request('/v1/webhooks?limit=100', { token })).json()) as { data: unknown[] }).data.length;
    const bad = await problem(await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/never`, events: ['*'], payload: 'skinny' } }), 422, 'validation_failed');
    expect(bad.errors?.map((e) => e.pointer)).to.deep.equal(['/payload']);
    const after = ((await (await app.request('/v1/webhooks?limit=100', { token })).json()) as { data: unknown[] }).data.length;
    expect(after).to.equal(before);
    const sub = await subscribe({});
    await problem(await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { payload: 'THIN' } }), 422, 'validation_failed');
    expect(((await (await app.request(`/v1/webhooks/${sub.id}`, { token })).json()) as Sub).payload).to.equal('full');
  });
});
