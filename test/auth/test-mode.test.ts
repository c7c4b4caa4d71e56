import { expect } from 'chai';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { internal, person, type Person } from '../helpers/admin.js';
import { contractOf } from '../helpers/contract.js';
import { problem } from '../helpers/problem.js';
import { startReceiver, verified, type Receiver } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

type Obj = { id: string; livemode: boolean; [field: string]: unknown };
type Page = { data: Obj[]; has_more: boolean };
type Key = { id: string; mode: string; prefix: string; token: string };

/** docs/reference.md section 21: test keys, objects and events that never touch live data. */
describe('test mode: keys, objects and events apart from live ones', () => {
  let app: TestApp;
  let admin: Person;
  let live: string;
  let test: string;
  let testKey: Key;

  const json = async <T>(res: Response, status = 200): Promise<T> => {
    expect(res.status, await res.clone().text()).to.equal(status);
    return (await res.json()) as T;
  };
  const makeKey = async (mode: string | undefined, name = 'k'): Promise<Response> => internal(app, '/keys', { method: 'POST', cookie: admin.cookie, json: { name, scopes: ['read:deals', 'write:deals', 'read:clients', 'write:clients', 'webhooks:manage'], ...(mode ? { mode } : {}) } });

  before(async () => {
    app = await startApp({ env: fastWebhooks() });
    admin = await person(app);
    live = (await json<Key>(await makeKey(undefined, 'live key'), 201)).token;
    testKey = await json<Key>(await makeKey('test', 'test key'), 201);
    test = testKey.token;
  });
  after(() => app.close());

  it('makes a test key with a wsk_test_ token from the internal API, listed under mode=test only, and says so on /health', async () => {
    expect(testKey.mode).to.equal('test');
    expect(test).to.match(/^wsk_test_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
    expect(testKey.prefix).to.equal(test.slice(0, 16));
    expect(live).to.match(/^wsk_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
    const tests = await json<Page>(await internal(app, '/keys?mode=test', { cookie: admin.cookie }));
    expect(tests.data.map((k) => k.id)).to.deep.equal([testKey.id]);
    const lives = await json<Page>(await internal(app, '/keys', { cookie: admin.cookie }));
    expect(lives.data.map((k) => k.mode)).to.deep.equal(['live']);
    const health = await json<{ livemode: boolean; workspace: { id: string } }>(await app.request('/v1/health', { token: test }));
    expect(health.livemode).to.equal(false);
    expect(health.workspace.id).to.equal(admin.workspaceId);
    expect((await json<{ livemode: boolean }>(await app.request('/v1/health', { token: live }))).livemode).to.equal(true);
  });

  it('refuses a mode that is neither live nor test with 422, and makes no key', async () => {
    const before = (await json<Page>(await internal(app, '/keys?mode=test', { cookie: admin.cookie }))).data.length;
    await problem(await makeKey('sandbox'), 422, 'validation_failed');
    await problem(await internal(app, '/keys?mode=sandbox', { cookie: admin.cookie }), 400, 'invalid_parameter');
    expect((await json<Page>(await internal(app, '/keys?mode=test', { cookie: admin.cookie }))).data.length).to.equal(before);
  });

  it('keeps objects of each mode to its keys: get, list, search, expand, batch, update and delete never cross', async () => {
    const mine = await json<Obj>(await app.request('/v1/clients', { token: test, method: 'POST', json: { name: 'Testing Ltd' } }), 201);
    const theirs = await json<Obj>(await app.request('/v1/clients', { token: live, method: 'POST', json: { name: 'Testing Live Ltd' } }), 201);
    expect(mine.livemode).to.equal(false);
    expect(theirs.livemode).to.equal(true);
    // Get and change across modes: 404, as an id that does not exist.
    await problem(await app.request(`/v1/clients/${theirs.id}`, { token: test }), 404, 'not_found');
    await problem(await app.request(`/v1/clients/${mine.id}`, { token: live }), 404, 'not_found');
    await problem(await app.request(`/v1/clients/${theirs.id}`, { token: test, method: 'PATCH', json: { name: 'Taken over' } }), 404, 'not_found');
    await problem(await app.request(`/v1/clients/${theirs.id}`, { token: test, method: 'DELETE' }), 404, 'not_found');
    expect((await json<Obj>(await app.request(`/v1/clients/${theirs.id}`, { token: live }))).name).to.equal('Testing Live Ltd');
    // A reference to the other mode's object is refused like one to no object, and writes nothing.
    const crossing = await app.request('/v1/deals', { token: test, method: 'POST', json: { title: 'Crossing', client_id: theirs.id } });
    expect(crossing.status).to.equal(422);
    // Lists and search see their own mode only, each object saying which.
    const listed = await json<Page>(await app.request('/v1/clients?limit=200', { token: test }));
    expect(listed.data.map((c) => c.id)).to.include(mine.id).and.not.include(theirs.id);
    expect(listed.data.every((c) => c.livemode === false)).to.equal(true);
    const found = await json<Page>(await app.request('/v1/clients?q=testing', { token: test }));
    expect(found.data.map((c) => c.id)).to.deep.equal([mine.id]);
    const foundLive = await json<Page>(await app.request('/v1/clients?q=testing', { token: live }));
    expect(foundLive.data.map((c) => c.id)).to.deep.equal([theirs.id]);
    // Batch and expand, in test mode.
    const batch = await json<{ data: Obj[] }>(await app.request('/v1/deals/batch', { token: test, method: 'POST', json: { data: [{ title: 'One', client_id: mine.id }, { title: 'Two' }] } }), 201);
    expect(batch.data.map((d) => d.livemode)).to.deep.equal([false, false]);
    const expanded = await json<Obj & { client: Obj }>(await app.request(`/v1/deals/${batch.data[0]!.id}?expand=client`, { token: test }));
    expect(expanded.client).to.include({ id: mine.id, livemode: false });
    expect((await json<Page>(await app.request('/v1/deals?limit=200', { token: live }))).data.map((d) => d.id)).not.to.include.members(batch.data.map((d) => d.id));
    // Update and delete within the mode.
    const changed = await json<Obj>(await app.request(`/v1/clients/${mine.id}`, { token: test, method: 'PATCH', json: { name: 'Testing Two' } }));
    expect(changed).to.include({ name: 'Testing Two', livemode: false, version: 2 });
    expect((await app.request(`/v1/deals/${batch.data[1]!.id}`, { token: test, method: 'DELETE' })).status).to.equal(204);
  });

  it('keeps the event log per mode, each event saying its mode', async () => {
    const deal = await json<Obj>(await app.request('/v1/deals', { token: test, method: 'POST', json: { title: 'Logged in test' } }), 201);
    const tests = await json<{ data: Array<{ livemode: boolean; data: { object: Obj } }> }>(await app.request('/v1/event-log?limit=200', { token: test }));
    expect(tests.data.map((e) => e.data.object.id)).to.include(deal.id);
    expect(tests.data.every((e) => e.livemode === false && e.data.object.livemode === false)).to.equal(true);
    const lives = await json<{ data: Array<{ livemode: boolean; data: { object: Obj } }> }>(await app.request('/v1/event-log?limit=200', { token: live }));
    expect(lives.data.map((e) => e.data.object.id)).not.to.include(deal.id);
    expect(lives.data.every((e) => e.livemode === true)).to.equal(true);
    // The administration area's event log, per mode.
    const inside = await json<{ data: Array<{ type: string; livemode: boolean; data: { object: Obj } }> }>(await internal(app, '/event-log?mode=test&type=deal.created', { cookie: admin.cookie }));
    expect(inside.data.map((e) => e.data.object.id)).to.include(deal.id);
    expect(inside.data.every((e) => e.type === 'deal.created' && e.livemode === false)).to.equal(true);
    const insideLive = await json<{ data: Array<{ data: { object: Obj } }> }>(await internal(app, '/event-log', { cookie: admin.cookie }));
    expect(insideLive.data.map((e) => e.data.object.id)).not.to.include(deal.id);
    await problem(await internal(app, '/event-log?type=nothing.here', { cookie: admin.cookie }), 400, 'invalid_parameter');
  });

  it('counts live and test keys apart against the plan', async () => {
    const free = await person(app, { plan: 'starter' });
    const make = (mode: string) => internal(app, '/keys', { method: 'POST', cookie: free.cookie, json: { name: mode, scopes: ['read:deals'], mode } });
    for (let i = 0; i < 5; i++) expect((await make('live')).status).to.equal(201);
    for (let i = 0; i < 5; i++) expect((await make('test')).status).to.equal(201);
    await problem(await make('test'), 403, 'key_limit_reached');
    await problem(await make('live'), 403, 'key_limit_reached');
    expect((await json<Page>(await internal(app, '/keys?mode=test', { cookie: free.cookie }))).data).to.have.length(5);
  });

  it('records a test key in the workspace audit log, saying its mode', async () => {
    const log = await json<{ data: Array<{ action: string; target: { id: string }; details: Record<string, unknown> }> }>(await internal(app, '/audit-log?action=key.created', { cookie: admin.cookie }));
    const entry = log.data.find((e) => e.target.id === testKey.id);
    expect(entry?.details).to.include({ mode: 'test' });
  });

  it('revokes a test key by its mode only: under mode=live it is not found', async () => {
    const key = await json<Key>(await makeKey('test', 'short-lived'), 201);
    await problem(await internal(app, `/keys/${key.id}`, { method: 'DELETE', cookie: admin.cookie }), 404, 'not_found');
    expect((await app.request('/v1/health', { token: key.token })).status).to.equal(200);
    expect((await internal(app, `/keys/${key.id}?mode=test`, { method: 'DELETE', cookie: admin.cookie })).status).to.equal(204);
    await waitFor(async () => (await app.request('/v1/health', { token: key.token })).status === 401, 5000, 'the revoked test key refused');
  });
});

describe('test mode: events reach only subscriptions of their mode (a worker, a real receiver)', () => {
  let app: TestApp;
  let worker: Worker;
  let receiver: Receiver;
  let live: string;
  let test: string;
  let admin: Person;

  before(async () => {
    receiver = await startReceiver();
    app = await startApp({ env: fastWebhooks() });
    receiver.contract = await contractOf(app.url);
    worker = startWorker(app.deps);
    admin = await person(app);
    const make = async (mode: string) => ((await (await internal(app, '/keys', { method: 'POST', cookie: admin.cookie, json: { name: mode, scopes: ['read:deals', 'write:deals', 'webhooks:manage'], mode } })).json()) as Key).token;
    live = await make('live');
    test = await make('test');
  });
  after(async () => {
    await worker.stop();
    await app.close();
    await receiver.close();
  });
  afterEach(() => expect(receiver.rejected).to.deep.equal([]));

  it('sends test events only to test subscriptions, with livemode false, and live ones only to live subscriptions', async () => {
    const subscribe = async (token: string, path: string) => {
      const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: receiver.url + path, events: ['deal.*'] } });
      expect(res.status, await res.clone().text()).to.equal(201);
      const sub = (await res.json()) as { id: string; secret: string; livemode: boolean };
      receiver.secrets.set(path, [sub.secret]);
      return sub;
    };
    const testSub = await subscribe(test, '/test-mode');
    const liveSub = await subscribe(live, '/live-mode');
    expect(testSub.livemode).to.equal(false);
    expect(liveSub.livemode).to.equal(true);
    // Each mode's key sees only its own subscriptions.
    const listed = (await (await app.request('/v1/webhooks', { token: test })).json()) as { data: Array<{ id: string }> };
    expect(listed.data.map((s) => s.id)).to.deep.equal([testSub.id]);
    await problem(await app.request(`/v1/webhooks/${liveSub.id}`, { token: test }), 404, 'not_found');

    const testDeal = (await (await app.request('/v1/deals', { token: test, method: 'POST', json: { title: 'Test deal' } })).json()) as Obj;
    const liveDeal = (await (await app.request('/v1/deals', { token: live, method: 'POST', json: { title: 'Live deal' } })).json()) as Obj;
    const [toTest] = await receiver.waitFor(1, (r) => r.path === '/test-mode');
    const [toLive] = await receiver.waitFor(1, (r) => r.path === '/live-mode');
    const testBody = verified(testSub.secret, toTest!) as unknown as { livemode: boolean; data: { object: Obj } };
    const liveBody = verified(liveSub.secret, toLive!) as unknown as { livemode: boolean; data: { object: Obj } };
    expect(testBody.livemode).to.equal(false);
    expect(testBody.data.object).to.include({ id: testDeal.id, livemode: false });
    expect(liveBody.livemode).to.equal(true);
    expect(liveBody.data.object).to.include({ id: liveDeal.id, livemode: true });
    // Nothing crossed: each receiver path got exactly its own mode's event.
    expect(receiver.received.filter((r) => r.path === '/test-mode').map((r) => (JSON.parse(r.body) as { data: { object: Obj } }).data.object.id)).to.deep.equal([testDeal.id]);
    expect(receiver.received.filter((r) => r.path === '/live-mode').map((r) => (JSON.parse(r.body) as { data: { object: Obj } }).data.object.id)).to.deep.equal([liveDeal.id]);

    // The deliveries say their mode, in the public API and behind the session's mode=test.
    const deliveries = (await (await app.request(`/v1/webhooks/${testSub.id}/deliveries`, { token: test })).json()) as { data: Array<{ livemode: boolean; status: string }> };
    expect(deliveries.data.map((d) => d.livemode)).to.deep.equal([false]);
    const inside = await internal(app, `/webhooks/${testSub.id}/deliveries?mode=test`, { cookie: admin.cookie });
    expect(((await inside.json()) as { data: Array<{ livemode: boolean }> }).data.map((d) => d.livemode)).to.deep.equal([false]);
    await problem(await internal(app, `/webhooks/${testSub.id}/deliveries`, { cookie: admin.cookie }), 404, 'not_found');
    const webhooks = (await (await internal(app, '/webhooks?mode=test', { cookie: admin.cookie })).json()) as { data: Array<{ id: string }> };
    expect(webhooks.data.map((s) => s.id)).to.deep.equal([testSub.id]);
  });
});

describe('test mode: deleting the test data (DELETE /internal/v1/test-data, a job)', () => {
  let app: TestApp;
  let admin: Person;
  let live: string;
  let test: string;
  let jobs: { stop(): Promise<void> } | undefined;

  const count = async (table: string, workspaceId: string) => Number(((await app.deps.db(table).count({ n: '*' }).where('workspace_id', workspaceId).first()) as { n: number | string }).n);

  before(async () => {
    app = await startApp({ env: fastWebhooks() });
    admin = await person(app);
    const make = async (mode: string) => ((await (await internal(app, '/keys', { method: 'POST', cookie: admin.cookie, json: { name: mode, scopes: ['read:deals', 'write:deals', 'read:clients', 'write:clients'], mode } })).json()) as Key).token;
    live = await make('live');
    test = await make('test');
  });
  after(async () => {
    await jobs?.stop();
    await app.close();
  });

  it('deletes every test object and event in batches, off the request path, keeping the test keys and every live object', async () => {
    // More test deals than one batch deletes, a client, and their events; live objects beside them.
    for (let i = 0; i < 3; i++) {
      const res = await app.request('/v1/deals/batch', { token: test, method: 'POST', json: { data: Array.from({ length: 100 }, (_, n) => ({ title: `Test deal ${i}-${n}` })) } });
      expect(res.status).to.equal(201);
    }
    const client = (await (await app.request('/v1/clients', { token: test, method: 'POST', json: { name: 'Searchable Test Client' } })).json()) as Obj;
    await app.request(`/v1/clients/${client.id}`, { token: test, method: 'PATCH', json: { name: 'Searchable Test Client 2' } });
    const liveDeal = (await (await app.request('/v1/deals', { token: live, method: 'POST', json: { title: 'Live deal stays' } })).json()) as Obj;
    const twin = `${admin.workspaceId}_test`;
    expect(await count('deals', twin)).to.equal(300);
    const liveEvents = await count('events', admin.workspaceId);

    // A viewer may not; an admin gets a job, the same one when asking twice before it runs.
    const viewer = await person(app, { role: 'viewer', workspaceId: admin.workspaceId });
    await problem(await internal(app, '/test-data', { method: 'DELETE', cookie: viewer.cookie }), 403, 'insufficient_role');
    const asked = await internal(app, '/test-data', { method: 'DELETE', cookie: admin.cookie });
    expect(asked.status, await asked.clone().text()).to.equal(202);
    const job = (await asked.json()) as { id: string; status: string; kind: string };
    expect(job).to.include({ status: 'queued', kind: 'delete_test_data' });
    expect(asked.headers.get('location')).to.equal(`/internal/v1/jobs/${job.id}`);
    const again = (await (await internal(app, '/test-data', { method: 'DELETE', cookie: admin.cookie })).json()) as { id: string };
    expect(again.id).to.equal(job.id);
    // Nothing is deleted on the request path.
    expect(await count('deals', twin)).to.equal(300);

    // A process's job runner takes it.
    const { startJobRunner } = await import('../../src/jobs.js');
    jobs = startJobRunner(app.deps, app.registry);
    let polled: { status: string; progress: { objects: number; events: number }; finished_at: string | null } = { status: 'queued', progress: { objects: 0, events: 0 }, finished_at: null };
    await waitFor(async () => {
      polled = (await (await internal(app, `/jobs/${job.id}`, { cookie: viewer.cookie })).json()) as typeof polled;
      return polled.status === 'succeeded' || polled.status === 'failed';
    }, 30_000, 'the deletion to finish');
    expect(polled.status).to.equal('succeeded');
    expect(polled.progress).to.deep.equal({ objects: 301, events: 302 });
    expect(polled.finished_at).to.be.a('string');

    // Test mode is empty; its key still works; live mode is as it was.
    expect((await (await app.request('/v1/deals', { token: test })).json()) as Page).to.have.property('data').that.deep.equals([]);
    expect(((await (await app.request('/v1/event-log', { token: test })).json()) as Page).data).to.deep.equal([]);
    expect(((await (await app.request('/v1/clients?q=searchable', { token: test })).json()) as Page).data).to.deep.equal([]);
    expect(await count('search_terms', twin)).to.equal(0);
    expect(await count('events', twin)).to.equal(0);
    expect((await app.request(`/v1/deals/${liveDeal.id}`, { token: live })).status).to.equal(200);
    expect(await count('events', admin.workspaceId)).to.equal(liveEvents);
    // Audited, once, in the workspace's log.
    const audit = (await (await internal(app, '/audit-log?action=workspace.test_data_deleted', { cookie: admin.cookie })).json()) as { data: Array<{ target: { id: string } }> };
    expect(audit.data.map((e) => e.target.id)).to.deep.equal([job.id]);
    // Another workspace's job is not found; a new request after it finished is a new job.
    const other = await person(app);
    await problem(await internal(app, `/jobs/${job.id}`, { cookie: other.cookie }), 404, 'not_found');
    const next = (await (await internal(app, '/test-data', { method: 'DELETE', cookie: admin.cookie })).json()) as { id: string };
    expect(next.id).not.to.equal(job.id);
  });
});

describe('jobs (admin/jobs.ts): a job outlives the process that took it', () => {
  let app: TestApp;
  let jobs: { stop(): Promise<void> } | undefined;
  before(async () => {
    app = await startApp();
  });
  after(async () => {
    await jobs?.stop();
    await app.close();
  });

  it('takes over a job whose lease ended (its process died), carries on from its progress, and leaves one whose lease runs', async () => {
    const admin = await person(app);
    const key = ((await (await internal(app, '/keys', { method: 'POST', cookie: admin.cookie, json: { name: 't', scopes: ['read:deals', 'write:deals'], mode: 'test' } })).json()) as Key).token;
    expect((await app.request('/v1/deals', { token: key, method: 'POST', json: { title: 'Orphaned' } })).status).to.equal(201);
    const other = await person(app);
    const now = Date.now();
    const row = (id: string, workspaceId: string, leaseUntil: number) => ({ id, workspace_id: workspaceId, kind: 'delete_test_data', status: 'running', progress: JSON.stringify({ objects: 7, events: 9 }), error: null, created_by: JSON.stringify({ type: 'user', id: null, label: 'x' }), created_at: now - 120_000, started_at: now - 120_000, finished_at: null, lease_owner: 'jobs-dead', lease_until: leaseUntil });
    // One whose process died a minute ago, one whose process is still at it.
    await app.deps.db('jobs').insert([row('job_0000000000000000000000001', admin.workspaceId, now - 1000), row('job_0000000000000000000000002', other.workspaceId, now + 600_000)]);
    const { startJobRunner } = await import('../../src/jobs.js');
    jobs = startJobRunner(app.deps, app.registry);
    let polled: { status: string; progress: Record<string, number> } = { status: 'running', progress: {} };
    await waitFor(async () => {
      polled = (await (await internal(app, '/jobs/job_0000000000000000000000001', { cookie: admin.cookie })).json()) as typeof polled;
      return polled.status === 'succeeded';
    }, 15_000, 'the orphaned job to be taken over and finished');
    // Its count goes on from where the dead process left it.
    expect(polled.progress).to.deep.equal({ objects: 8, events: 10 });
    expect(((await (await app.request('/v1/deals', { token: key })).json()) as Page).data).to.deep.equal([]);
    const held = (await (await internal(app, '/jobs/job_0000000000000000000000002', { cookie: other.cookie })).json()) as { status: string };
    expect(held.status).to.equal('running');
    expect((await app.deps.db('jobs').first('lease_owner').where('id', 'job_0000000000000000000000002')) as { lease_owner: string }).to.deep.equal({ lease_owner: 'jobs-dead' });
  });
});
