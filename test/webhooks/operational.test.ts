import { expect } from 'chai';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { contractOf } from '../helpers/contract.js';
import { startReceiver, verified, type Receiver } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

// One retry, soon: a failing receiver's deliveries are failed (or waiting after a failed attempt) within a second.
const FAST = fastWebhooks({ WEBHOOK_RETRY_DELAYS: '30' });

type Sub = { id: string; secret: string; enabled: boolean; disabled_reason: string | null; failing_since: string | null; failing_reported_at: string | null };
type Event = { id: string; type: string; data: { object: Sub & { url: string } } };

/** docs/reference.md section 16: webhook.failing and webhook.disabled, events of the catalog about subscriptions. */
describe('operational events: webhook.failing and webhook.disabled', () => {
  let app: TestApp;
  let worker: Worker;
  let receiver: Receiver;
  let token: string;
  let workspaceId: string;
  let paths = 0;

  async function subscribe(events: string[], path = `/ops${++paths}`): Promise<Sub & { path: string }> {
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: receiver.url + path, events } });
    expect(res.status, await res.clone().text()).to.equal(201);
    const sub = (await res.json()) as Sub;
    receiver.secrets.set(path, [sub.secret]);
    return { ...sub, path };
  }
  const typesAt = (path: string) => receiver.received.filter((r) => r.path === path).map((r) => (JSON.parse(r.body) as Event).type);

  before(async () => {
    receiver = await startReceiver();
    app = await startApp({ env: FAST });
    receiver.contract = await contractOf(app.url);
    worker = startWorker(app.deps);
    ({ token, workspaceId } = await app.workspaceWithKey());
  });
  after(async () => {
    await worker.stop();
    await app.close();
    await receiver.close();
  });
  afterEach(() => {
    expect(receiver.rejected).to.deep.equal([]);
  });

  it('emits webhook.failing once a day when half of the last 20 deliveries failed, to the other subscriptions that select it', async () => {
    const failing = await subscribe(['*'], '/down');
    const watcher = await subscribe(['webhook.*']);
    receiver.respond = (r) => (r.path === '/down' ? { status: 500, body: 'down' } : {});
    for (let i = 0; i < 20; i += 1) expect((await app.request('/v1/deals', { token, method: 'POST', json: { title: `Failing ${i}` } })).status).to.equal(201);
    const [got] = await receiver.waitFor(1, (r) => r.path === watcher.path);
    const event = verified(watcher.secret, got!) as unknown as Event;
    expect(event.type).to.equal('webhook.failing');
    expect(event.data.object).to.include({ id: failing.id, enabled: true });
    expect(event.data.object.failing_reported_at).to.be.a('string');
    // More failures the same day: no second report.
    for (let i = 0; i < 5; i += 1) await app.request('/v1/deals', { token, method: 'POST', json: { title: `Still failing ${i}` } });
    await receiver.waitFor(25, (r) => r.path === '/down');
    // Every one of the 25 attempts recorded is the signal: a report is written in the transaction that records its attempt.
    await waitFor(async () => Number(((await app.deps.db('webhook_deliveries').where({ subscription_id: failing.id }).where('attempts', '>', 0).count({ n: '*' })) as Array<{ n: number | string }>)[0]!.n) === 25, 15_000, 'the 25 attempts recorded');
    const reports = (await app.deps.db('events').where({ workspace_id: workspaceId, type: 'webhook.failing' }).count({ n: '*' })) as Array<{ n: number | string }>;
    expect(Number(reports[0]!.n)).to.equal(1);
    expect(typesAt(watcher.path)).to.deep.equal(['webhook.failing']);
    // Never to the subscription it is about, though it selects everything.
    expect(typesAt('/down').filter((t) => t.startsWith('webhook.'))).to.deep.equal([]);
    const shown = (await (await app.request(`/v1/webhooks/${failing.id}`, { token })).json()) as Sub;
    expect(shown.failing_reported_at).to.equal(event.data.object.failing_reported_at);
    expect(shown.failing_since).to.be.a('string');
    receiver.respond = () => ({});
    await app.request(`/v1/webhooks/${failing.id}`, { token, method: 'DELETE' });
    await app.request(`/v1/webhooks/${watcher.id}`, { token, method: 'DELETE' });
  });

  it('emits webhook.disabled when the service turns a subscription off, and the event log shows both to webhooks:manage only', async () => {
    const gone = await subscribe(['lead.created'], '/gone');
    const watcher = await subscribe(['webhook.disabled']);
    receiver.respond = (r) => (r.path === '/gone' ? { status: 410 } : {});
    await app.request('/v1/leads', { token, method: 'POST', json: { name: 'Nobody home' } });
    const [got] = await receiver.waitFor(1, (r) => r.path === watcher.path);
    const event = verified(watcher.secret, got!) as unknown as Event;
    expect(event.type).to.equal('webhook.disabled');
    expect(event.data.object).to.include({ id: gone.id, enabled: false, disabled_reason: 'gone' });
    receiver.respond = () => ({});

    const log = async (key: string) => ((await (await app.request('/v1/event-log?limit=100', { token: key })).json()) as { data: Event[] }).data.map((e) => e.type);
    const manager = await app.addKey(workspaceId, ['webhooks:manage']);
    await waitFor(async () => (await log(manager)).includes('webhook.disabled'), 5000, 'webhook.disabled in the event log');
    expect(await log(manager)).to.include('webhook.failing');
    const reader = await app.addKey(workspaceId, ['read:deals', 'read:leads']);
    expect((await log(reader)).filter((t) => t.startsWith('webhook.'))).to.deep.equal([]);
    const catalog = ((await (await app.request('/v1/events', { token })).json()) as { data: Array<{ name: string }> }).data.map((e) => e.name);
    expect(catalog).to.include.members(['webhook.failing', 'webhook.disabled']);
  });
});
