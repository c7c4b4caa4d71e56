import { expect } from 'chai';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { contractOf } from '../helpers/contract.js';
import { problem } from '../helpers/problem.js';
import { deliveriesOf, startReceiver, verified, type Receiver } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

// Two retries: a delivery that keeps failing is given up after three attempts, as the tests expect.
const FAST = fastWebhooks({ WEBHOOK_RETRY_DELAYS: '0.2,0.2' });

describe('recovery: POST /v1/webhooks/{id}/recover (a real worker and receiver)', () => {
  let app: TestApp;
  let worker: Worker;
  let receiver: Receiver;
  let token: string;
  let workspaceId: string;
  let paths = 0;

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
    receiver.respond = () => ({});
  });

  /** A subscription to `events` at a path of its own, its secret registered with the receiver. */
  async function subscribe(events: string[]): Promise<{ id: string; path: string }> {
    paths += 1;
    const path = `/recover${paths}`;
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}${path}`, events } });
    expect(res.status, await res.clone().text()).to.equal(201);
    const sub = (await res.json()) as { id: string; secret: string };
    receiver.secrets.set(path, [sub.secret]);
    return { id: sub.id, path };
  }

  const recover = (id: string, json: unknown, key = token) => app.request(`/v1/webhooks/${id}/recover`, { token: key, method: 'POST', json });
  const setEnabled = async (id: string, enabled: boolean) => expect((await app.request(`/v1/webhooks/${id}`, { token, method: 'PATCH', json: { enabled } })).status).to.equal(200);
  const deliveries = (id: string) => deliveriesOf(app, token, id, '?limit=200');
  /** Every event of the workspace has been fanned out (so the fan-out made whatever deliveries it would). */
  const fannedOut = () =>
    waitFor(async () => Number((await app.deps.db('events').where({ workspace_id: workspaceId }).whereIn('id', app.deps.db('events_pending').select('event_id')).count({ n: '*' }))[0]!.n) === 0, 15_000, 'the fan-out');

  it('delivers once each the 50 events written while the subscription was disabled, with their own webhook-id; recovering again sends none', async () => {
    const sub = await subscribe(['deal.*']);
    await setEnabled(sub.id, false);
    const since = new Date().toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 50; i += 1) {
      const res = await app.request('/v1/deals', { token, method: 'POST', json: { title: `missed ${i}` } });
      expect(res.status).to.equal(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    await fannedOut();
    expect(await deliveries(sub.id)).to.have.length(0);
    await setEnabled(sub.id, true);

    const res = await recover(sub.id, { since });
    expect(res.status, await res.clone().text()).to.equal(202);
    expect(await res.json()).to.deep.equal({ deliveries: 50 });

    const got = await receiver.waitFor(50, (r) => r.path === sub.path);
    const events = got.map((r) => verified(receiver.secrets.get(sub.path)![0]!, r));
    expect(new Set(events.map((e) => e.data.object.id))).to.deep.equal(new Set(ids));
    // The webhook-id is the event's own id: the one the event log gives.
    for (const r of got) expect(r.id).to.equal(JSON.parse(r.body).id);
    expect(new Set(got.map((r) => r.id)).size).to.equal(50);
    const logged = (await (await app.request(`/v1/event-log/${got[0]!.id}`, { token })).json()) as { id: string };
    expect(logged.id).to.equal(got[0]!.id);

    await waitFor(async () => (await deliveries(sub.id)).every((d) => d.status === 'succeeded'), 15_000, 'every delivery to succeed');
    const again = await recover(sub.id, { since });
    expect(await again.json()).to.deep.equal({ deliveries: 0 });
    // A later event's delivery is the signal: anything sent before it would have arrived first.
    await app.request('/v1/deals', { token, method: 'POST', json: { title: 'After the recovery' } });
    await receiver.waitFor(51, (r) => r.path === sub.path);
    expect(await deliveries(sub.id)).to.have.length(51);
    expect(receiver.received.filter((r) => r.path === sub.path)).to.have.length(51);
  });

  it('sends failed deliveries of the window again, never the succeeded ones, and nothing from before the subscription', async () => {
    const before = await app.request('/v1/deals', { token, method: 'POST', json: { title: 'before the subscription' } });
    expect(before.status).to.equal(201);
    // Written with an offset of hours alone (+02), as RFC 3339's format lets through: the same instant.
    const since = new Date(Date.now() - 1000 + 2 * 3_600_000).toISOString().replace(/Z$/, '+02');
    const sub = await subscribe(['deal.created']);
    receiver.respond = (r) => (JSON.parse(r.body).data.object.title === 'fails' ? { status: 500, body: 'down' } : {});
    for (const title of ['fails', 'works']) expect((await app.request('/v1/deals', { token, method: 'POST', json: { title } })).status).to.equal(201);
    await waitFor(async () => {
      const list = await deliveries(sub.id);
      return list.length === 2 && list.every((d) => d.status !== 'pending');
    }, 15_000, 'one failed and one succeeded delivery');
    const failed = (await deliveries(sub.id)).find((d) => d.status === 'failed')!;
    expect(failed.attempts).to.equal(3);

    receiver.respond = () => ({});
    const res = await recover(sub.id, { since, until: new Date(Date.now() + 60_000).toISOString() });
    expect(await res.json()).to.deep.equal({ deliveries: 1 });
    await waitFor(async () => (await deliveries(sub.id)).every((d) => d.status === 'succeeded'), 15_000, 'the recovered delivery to succeed');
    const sent = receiver.received.filter((r) => r.path === sub.path);
    // fails x3, works x1, then fails once more, now answered 200: the same webhook-id as its attempts.
    expect(sent).to.have.length(5);
    expect(sent.filter((r) => r.id === failed.event_id)).to.have.length(4);
    expect(sent.map((r) => JSON.parse(r.body).data.object.title)).not.to.include('before the subscription');

    expect(await (await recover(sub.id, { since })).json()).to.deep.equal({ deliveries: 0 });
  });

  it('refuses a bad window, a disabled subscription and another workspace’s, changing nothing', async () => {
    const sub = await subscribe(['*']);
    const now = Date.now();
    const backwards = await problem(await recover(sub.id, { since: new Date(now).toISOString(), until: new Date(now - 1000).toISOString() }), 422, 'validation_failed');
    expect(backwards.errors).to.deep.equal([{ pointer: '/since', message: 'must be before until' }]);
    // until left out is now: the refusal says so, rather than name a value the client never sent.
    const future = await problem(await recover(sub.id, { since: new Date(now + 3_600_000).toISOString() }), 422, 'validation_failed');
    expect(future.detail).to.match(/^since must be before until, which is now \(\d{4}-\d\d-\d\dT[\d:.]+Z\) when left out\.$/);
    await problem(await recover(sub.id, {}), 422, 'validation_failed');
    await problem(await recover(sub.id, { since: 'yesterday' }), 422, 'validation_failed');
    await problem(await recover(sub.id, { since: new Date(now).toISOString(), extra: 1 }), 422, 'validation_failed');
    await setEnabled(sub.id, false);
    const disabled = await problem(await recover(sub.id, { since: new Date(now - 60_000).toISOString() }), 409, 'subscription_disabled');
    expect(disabled.detail).to.contain('enable it first');
    const other = await app.workspaceWithKey();
    await problem(await recover(sub.id, { since: new Date(now - 60_000).toISOString() }, other.token), 404, 'not_found');
    const { token: reader } = await app.workspaceWithKey({ scopes: ['read:deals'] });
    await problem(await recover(sub.id, { since: new Date(now - 60_000).toISOString() }, reader), 403, 'insufficient_scope');
    expect(await deliveries(sub.id)).to.have.length(0);
  });
});
