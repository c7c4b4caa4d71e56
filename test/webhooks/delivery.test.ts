import { expect } from 'chai';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { manualClock, startApp, waitFor, type TestApp } from '../helpers/app.js';
import { contractOf } from '../helpers/contract.js';
import { startReceiver, verified, type Receiver } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

type Delivery = { id: string; event_id: string; event_type: string; status: string; attempts: number; last_response_status: number | null; last_error: string | null; next_attempt_at: string | null; delivered_at: string | null };
type Sub = { id: string; secret: string; enabled: boolean; disabled_reason: string | null };

/** Settings that make retries and timeouts fit in a test: 3 retries 0.3 s apart, 1 s timeout. */
const FAST = fastWebhooks();

describe('webhook deliveries (an in-process worker, a real receiver)', () => {
  let app: TestApp;
  let worker: Worker;
  let receiver: Receiver;
  let token: string;
  let paths = 0;

  /** A subscription of its own path on the receiver. */
  async function subscribe(events: string[], options: { url?: string; as?: string } = {}): Promise<Sub & { path: string }> {
    const path = `/hook${++paths}`;
    const res = await app.request('/v1/webhooks', { token: options.as ?? token, method: 'POST', json: { url: options.url ?? receiver.url + path, events } });
    expect(res.status, await res.clone().text()).to.equal(201);
    const sub = (await res.json()) as Sub;
    receiver.secrets.set(path, [sub.secret]);
    return { ...sub, path };
  }

  async function write(method: string, path: string, json?: unknown): Promise<Record<string, unknown> & { id: string }> {
    const res = await app.request(path, { token, method, ...(json !== undefined ? { json } : {}) });
    expect(res.status, await res.clone().text()).to.be.oneOf([200, 201, 204]);
    return res.status === 204 ? { id: '' } : ((await res.json()) as Record<string, unknown> & { id: string });
  }

  async function deliveries(subscriptionId: string): Promise<Delivery[]> {
    return ((await (await app.request(`/v1/webhooks/${subscriptionId}/deliveries?limit=200`, { token })).json()) as { data: Delivery[] }).data;
  }

  async function settled(subscriptionId: string, count: number, timeoutMs = 15_000): Promise<Delivery[]> {
    await waitFor(async () => {
      const list = await deliveries(subscriptionId);
      return list.length >= count && list.every((d) => d.status !== 'pending');
    }, timeoutMs, `${count} finished deliveries of ${subscriptionId}`);
    return deliveries(subscriptionId);
  }

  async function subscription(id: string): Promise<Sub> {
    return (await (await app.request(`/v1/webhooks/${id}`, { token })).json()) as Sub;
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
  beforeEach(() => {
    receiver.respond = () => ({});
  });
  afterEach(() => {
    // Every delivery that arrived verified with standardwebhooks against its subscription's secret.
    expect(receiver.rejected).to.deep.equal([]);
  });

  it('delivers every event signed as Standard Webhooks; the standardwebhooks package verifies each', async () => {
    const sub = await subscribe(['*']);
    const deal = await write('POST', '/v1/deals', { title: 'Signed' });
    await write('PATCH', `/v1/deals/${deal.id}`, { stage: 'won' });
    await write('DELETE', `/v1/deals/${deal.id}`);
    const got = await receiver.waitFor(4, (r) => r.path === sub.path);
    const stored = (await app.deps.db('events').where({ object_id: deal.id })) as Array<{ id: string; payload: string }>;
    expect(got.map((r) => verified(sub.secret, r).type)).to.have.members(['deal.created', 'deal.updated', 'deal.stage_changed', 'deal.deleted']);
    for (const r of got) {
      const event = stored.find((e) => e.id === r.id);
      expect(event, `event ${r.id}`).to.not.equal(undefined);
      expect(r.body).to.equal(event?.payload);
      expect(r.headers['x-service-signature']).to.equal(r.headers['webhook-signature']);
      expect(r.headers['content-type']).to.equal('application/json');
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).to.be.lessThan(10);
      expect(String(r.headers['webhook-signature'])).to.match(/^v1,[A-Za-z0-9+/]+=*$/);
    }
    // A tampered body does not verify: the check above could fail.
    const tampered = { ...got[0]!, body: got[0]!.body.replace('Signed', 'Forged') };
    expect(() => verified(sub.secret, tampered)).to.throw();
    const log = await settled(sub.id, 4);
    expect(log.every((d) => d.status === 'succeeded' && d.attempts === 1 && d.last_response_status === 200)).to.equal(true);
  });

  it('sends credentials in the URL as HTTP Basic authentication, the password sealed at rest and never shown back', async () => {
    const path = `/hook${++paths}`;
    const [scheme, rest] = receiver.url.split('://') as [string, string];
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${scheme}://hook%20user:s3cr%3At@${rest}${path}`, events: ['deal.created'] } });
    expect(res.status, await res.clone().text()).to.equal(201);
    const sub = (await res.json()) as Sub & { url: string };
    receiver.secrets.set(path, [sub.secret]);
    expect(sub.url).to.equal(`${scheme}://hook%20user@${rest}${path}`);
    expect(JSON.stringify(await subscription(sub.id))).to.not.contain('s3cr');
    const row = (await app.deps.db('webhook_subscriptions').where({ id: sub.id }).first('url', 'url_password')) as { url: string; url_password: string };
    expect(row.url).to.equal(sub.url);
    expect(row.url_password).to.be.a('string').and.not.contain('s3cr');
    await write('POST', '/v1/deals', { title: 'Behind a password' });
    const [got] = await receiver.waitFor(1, (r) => r.path === path);
    expect(got!.headers.authorization).to.equal(`Basic ${Buffer.from('hook user:s3cr:t').toString('base64')}`);
    // A URL without credentials sends none.
    const plain = await subscribe(['deal.created']);
    await write('POST', '/v1/deals', { title: 'In the open' });
    const [open] = await receiver.waitFor(1, (r) => r.path === plain.path);
    expect(open!.headers.authorization).to.equal(undefined);
  });

  it('gives each subscription exactly the events it selected, and none to one that is off', async () => {
    const deals = await subscribe(['deal.*']);
    const some = await subscribe(['invoice.paid', 'lead.scored']);
    const all = await subscribe(['*']);
    const off = await subscribe(['*']);
    await app.request(`/v1/webhooks/${off.id}`, { token, method: 'PATCH', json: { enabled: false } });
    const deal = await write('POST', '/v1/deals', { title: 'Pick me' });
    await write('PATCH', `/v1/deals/${deal.id}`, { stage: 'qualified' });
    await write('POST', '/v1/leads', { name: 'Scored', score: 80 });
    const invoice = await write('POST', '/v1/invoices', { number: 'INV-P' });
    await write('PATCH', `/v1/invoices/${invoice.id}`, { status: 'open' });
    await write('PATCH', `/v1/invoices/${invoice.id}`, { status: 'paid' });
    await write('POST', '/v1/clients', { name: 'Nobody asked' });
    const everything = ['deal.created', 'deal.updated', 'deal.stage_changed', 'lead.created', 'lead.scored', 'invoice.created', 'invoice.updated', 'invoice.opened', 'invoice.updated', 'invoice.paid', 'client.created'];
    await receiver.waitFor(everything.length, (r) => r.path === all.path);
    await settled(all.id, everything.length);
    await settled(deals.id, 3);
    await settled(some.id, 2);
    const types = (path: string) => receiver.received.filter((r) => r.path === path).map((r) => (JSON.parse(r.body) as { type: string }).type);
    expect(types(all.path)).to.have.members(everything);
    expect(types(deals.path)).to.have.members(['deal.created', 'deal.updated', 'deal.stage_changed']);
    expect(types(some.path)).to.have.members(['lead.scored', 'invoice.paid']);
    expect(types(off.path)).to.deep.equal([]);
    expect(await deliveries(off.id)).to.deep.equal([]);
  });

  it('sends nothing to a subscription for events written before it existed', async () => {
    const before = await write('POST', '/v1/clients', { name: 'Earlier' });
    const sub = await subscribe(['client.*']);
    await write('PATCH', `/v1/clients/${before.id}`, { name: 'Later' });
    // A later event's arrival is the signal: the fan-out takes events in order, so by then it has
    // made whatever delivery it would of the earlier ones.
    await write('PATCH', `/v1/clients/${before.id}`, { name: 'Latest' });
    await receiver.waitFor(2, (r) => r.path === sub.path);
    expect((await deliveries(sub.id)).map((d) => d.event_type)).to.deep.equal(['client.updated', 'client.updated']);
    expect(receiver.received.filter((r) => r.path === sub.path).map((r) => (JSON.parse(r.body) as { type: string }).type)).to.deep.equal(['client.updated', 'client.updated']);
  });

  it('retries a failing receiver with the same webhook-id until it answers 2xx', async () => {
    const sub = await subscribe(['lead.created']);
    let failures = 0;
    receiver.respond = (r) => (r.path === sub.path && failures++ < 2 ? { status: 500, body: 'try again' } : {});
    await write('POST', '/v1/leads', { name: 'Retried' });
    const got = await receiver.waitFor(3, (r) => r.path === sub.path);
    expect(new Set(got.map((r) => r.id)).size).to.equal(1);
    for (const r of got) verified(sub.secret, r);
    // The event log serves the very bytes that were signed and delivered.
    const logged = await app.request(`/v1/event-log/${got[0]?.id}`, { token });
    expect(await logged.text()).to.equal(got[0]?.body);
    const [d] = await settled(sub.id, 1);
    expect(d).to.deep.include({ status: 'succeeded', attempts: 3, last_response_status: 200, last_error: null });
    const attempts = (await app.deps.db('webhook_attempts').where({ delivery_id: d!.id }).orderBy('attempt')) as Array<{ response_status: number; response_excerpt: string; duration_ms: number }>;
    expect(attempts.map((a) => a.response_status)).to.deep.equal([500, 500, 200]);
    expect(attempts[0]?.response_excerpt).to.equal('try again');
    // Over HTTP: the delivery with its three attempts, newest first.
    const res = await app.request(`/v1/webhooks/${sub.id}/deliveries/${d!.id}`, { token });
    expect(res.status).to.equal(200);
    const one = (await res.json()) as { id: string; status: string; attempts: Array<{ attempt: number; attempted_at: string; duration_ms: number; response_status: number | null; error: string | null; response_excerpt: string | null }> };
    expect(one).to.deep.include({ id: d!.id, status: 'succeeded' });
    expect(one.attempts.map((a) => [a.attempt, a.response_status, a.error, a.response_excerpt])).to.deep.equal([
      [3, 200, null, 'ok'],
      [2, 500, 'answered 500', 'try again'],
      [1, 500, 'answered 500', 'try again'],
    ]);
    const starts = one.attempts.map((a) => Date.parse(a.attempted_at));
    expect(starts).to.deep.equal([...starts].sort((x, y) => y - x));
    expect(one.attempts.every((a) => a.duration_ms >= 0)).to.equal(true);
    // Another workspace, or another subscription's path, finds nothing.
    const { token: stranger } = await app.workspaceWithKey();
    expect((await app.request(`/v1/webhooks/${sub.id}/deliveries/${d!.id}`, { token: stranger })).status).to.equal(404);
    const other = await subscribe(['lead.created']);
    expect((await app.request(`/v1/webhooks/${other.id}/deliveries/${d!.id}`, { token })).status).to.equal(404);
    expect((await app.request(`/v1/webhooks/${sub.id}/deliveries/dlv_nothing`, { token })).status).to.equal(404);
  });

  it('counts no answer within the timeout as a failure, and retries', async () => {
    const sub = await subscribe(['lead.created']);
    let slow = true;
    receiver.respond = (r) => {
      if (r.path !== sub.path || !slow) return {};
      slow = false;
      return { delayMs: 2500 };
    };
    await write('POST', '/v1/leads', { name: 'Slow' });
    const [d] = await settled(sub.id, 1);
    expect(d).to.deep.include({ status: 'succeeded', attempts: 2 });
    const first = (await app.deps.db('webhook_attempts').where({ delivery_id: d!.id, attempt: 1 }).first()) as { error: string; response_status: number | null; duration_ms: number };
    expect(first.response_status).to.equal(null);
    expect(first.error).to.match(/no answer within 1 s/);
    expect(first.duration_ms).to.be.within(900, 6000);
  });

  it('fails a delivery whose receiver refuses connections once its retries are used up', async () => {
    const closed = await startReceiver();
    const url = `${closed.url}/gone`;
    await closed.close();
    const sub = await subscribe(['lead.created'], { url });
    await write('POST', '/v1/leads', { name: 'Nobody home' });
    const [d] = await settled(sub.id, 1);
    expect(d).to.deep.include({ status: 'failed', attempts: 4, last_response_status: null, next_attempt_at: null });
    expect(d?.last_error).to.match(/ECONNREFUSED/);
  });

  it('does not follow a redirect: a 3xx is a failure', async () => {
    const sub = await subscribe(['lead.created']);
    receiver.respond = (r) => (r.path === sub.path ? { status: 302, headers: { location: `${receiver.url}/elsewhere` } } : {});
    await write('POST', '/v1/leads', { name: 'Moved' });
    const [d] = await settled(sub.id, 1);
    expect(d).to.deep.include({ status: 'failed', attempts: 4, last_response_status: 302 });
    expect(d?.last_error).to.match(/redirect/);
    expect(receiver.received.filter((r) => r.path === '/elsewhere')).to.deep.equal([]);
  });

  it('disables the subscription on 410 and sends it nothing more until it is turned back on', async () => {
    const sub = await subscribe(['client.*']);
    receiver.respond = (r) => (r.path === sub.path ? { status: 410 } : {});
    const client = await write('POST', '/v1/clients', { name: 'Gone' });
    const [d] = await settled(sub.id, 1);
    expect(d).to.deep.include({ status: 'failed', attempts: 1, last_response_status: 410 });
    expect(await subscription(sub.id)).to.deep.include({ enabled: false, disabled_reason: 'gone' });
    // The service's own change is in the audit log, once, in the same transaction as the change.
    const audit = (await app.deps.db('audit_log').select('actor_type', 'actor_label', 'action', 'details').where({ target_id: sub.id, action: 'webhook.disabled' })) as Array<{ actor_type: string; actor_label: string; details: string }>;
    expect(audit).to.have.length(1);
    expect(audit[0]).to.include({ actor_type: 'system', actor_label: 'Workspace API' });
    expect(JSON.parse(String(audit[0]?.details))).to.include({ reason: 'gone' });

    receiver.respond = () => ({});
    // A subscription of the same events that is still on: its delivery of the next event is the
    // signal that the fan-out has passed that event.
    const witness = await subscribe(['client.updated']);
    await write('PATCH', `/v1/clients/${client.id}`, { name: 'Still gone' });
    await receiver.waitFor(1, (r) => r.path === witness.path);
    expect(await deliveries(sub.id)).to.have.length(1);

    expect(await (await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { enabled: true } })).json()).to.deep.include({ enabled: true, disabled_reason: null });
    await write('PATCH', `/v1/clients/${client.id}`, { name: 'Back' });
    const got = await receiver.waitFor(2, (r) => r.path === sub.path);
    expect((JSON.parse(got[1]!.body) as { type: string }).type).to.equal('client.updated');
  });

  it("honours a receiver's Retry-After on 429 and 503", async () => {
    for (const status of [429, 503]) {
      const sub = await subscribe(['lead.created']);
      let first = true;
      receiver.respond = (r) => {
        if (r.path !== sub.path || !first) return {};
        first = false;
        return { status, headers: { 'retry-after': '2' } };
      };
      await write('POST', '/v1/leads', { name: `Later ${status}` });
      const got = await receiver.waitFor(2, (r) => r.path === sub.path);
      // The schedule alone would have retried after 0.3 s (± 20%).
      expect(got[1]!.at - got[0]!.at).to.be.within(1900, 10_000);
    }
  });

  it('signs with both secrets for 24 hours after a rotation, and each verifies', async () => {
    const sub = await subscribe(['client.created']);
    const rotated = (await (await app.request(`/v1/webhooks/${sub.id}/rotate-secret`, { token, method: 'POST' })).json()) as Sub;
    expect(rotated.secret).to.match(/^whsec_/).and.not.equal(sub.secret);
    receiver.secrets.set(sub.path, [rotated.secret]);
    await write('POST', '/v1/clients', { name: 'Rotation' });
    const [r] = await receiver.waitFor(1, (x) => x.path === sub.path);
    expect(String(r!.headers['webhook-signature']).split(' ')).to.have.length(2);
    expect(verified(rotated.secret, r!).type).to.equal('client.created');
    expect(verified(sub.secret, r!).type).to.equal('client.created');
    expect(() => verified(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, r!)).to.throw();
  });

  it('sends a webhook.test delivery to that subscription only', async () => {
    const target = await subscribe(['deal.created']);
    const other = await subscribe(['*']);
    const res = await app.request(`/v1/webhooks/${target.id}/test`, { token, method: 'POST' });
    expect(res.status).to.equal(202);
    const d = (await res.json()) as Delivery;
    expect(d).to.deep.include({ event_type: 'webhook.test', status: 'pending', attempts: 0 });
    const [r] = await receiver.waitFor(1, (x) => x.path === target.path);
    const event = verified(target.secret, r!);
    expect(event).to.deep.include({ id: d.event_id, type: 'webhook.test' });
    expect(event.data.object.id).to.equal(target.id);
    // The other subscription's delivery of a later event is the signal that anything sent before it would have been.
    await write('POST', '/v1/clients', { name: 'After the test' });
    const [later] = await receiver.waitFor(1, (x) => x.path === other.path);
    expect(verified(other.secret, later!).type).to.equal('client.created');
    expect((await deliveries(other.id)).map((x) => x.event_type)).to.deep.equal(['client.created']);
    expect((await settled(target.id, 1))[0]).to.deep.include({ id: d.id, status: 'succeeded' });
  });

  it('retries one failed delivery on request', async () => {
    const sub = await subscribe(['lead.created']);
    receiver.respond = (r) => (r.path === sub.path ? { status: 500 } : {});
    await write('POST', '/v1/leads', { name: 'Second chance' });
    const [failed] = await settled(sub.id, 1);
    expect(failed).to.deep.include({ status: 'failed', attempts: 4 });
    receiver.respond = () => ({});
    const res = await app.request(`/v1/webhooks/${sub.id}/deliveries/${failed!.id}/retry`, { token, method: 'POST' });
    expect(res.status).to.equal(202);
    expect(await res.json()).to.deep.include({ id: failed!.id, status: 'pending' });
    const [done] = await settled(sub.id, 1);
    expect(done).to.deep.include({ id: failed!.id, status: 'succeeded', attempts: 5, last_response_status: 200 });
    const got = receiver.received.filter((r) => r.path === sub.path);
    expect(got).to.have.length(5);
    expect(new Set(got.map((r) => r.id)).size).to.equal(1);
    const missing = await app.request(`/v1/webhooks/${sub.id}/deliveries/dlv_nothing/retry`, { token, method: 'POST' });
    expect(missing.status).to.equal(404);
  });

  it("keeps a receiver's answer that holds NUL bytes, each read as U+FFFD (PostgreSQL's text cannot hold U+0000)", async () => {
    const sub = await subscribe(['lead.created']);
    let first = true;
    receiver.respond = (r) => {
      if (r.path !== sub.path || !first) return {};
      first = false;
      return { status: 500, body: 'bin\u0000ary\u0000' };
    };
    await write('POST', '/v1/leads', { name: 'Binary answer' });
    const [done] = await settled(sub.id, 1);
    expect(done).to.deep.include({ status: 'succeeded', attempts: 2 });
    const one = (await (await app.request(`/v1/webhooks/${sub.id}/deliveries/${done!.id}`, { token })).json()) as { attempts: Array<{ response_status: number; response_excerpt: string }> };
    expect(one.attempts.map((a) => [a.response_status, a.response_excerpt])).to.deep.equal([
      [200, 'ok'],
      [500, 'bin\uFFFDary\uFFFD'],
    ]);
  });

  it('records the rest of a batch when a subscription is deleted while its attempt is in flight', async () => {
    const doomed = await subscribe(['client.created']);
    const kept = await subscribe(['client.created']);
    receiver.respond = (r) => (r.path === doomed.path || r.path === kept.path ? { delayMs: 600 } : {});
    await write('POST', '/v1/clients', { name: 'Mid-flight' });
    await receiver.waitFor(1, (r) => r.path === doomed.path);
    await receiver.waitFor(1, (r) => r.path === kept.path);
    expect((await app.request(`/v1/webhooks/${doomed.id}`, { token, method: 'DELETE' })).status).to.equal(204);
    const [d] = await settled(kept.id, 1);
    expect(d).to.deep.include({ status: 'succeeded', attempts: 1 });
    expect(receiver.received.filter((r) => r.path === kept.path)).to.have.length(1);
  });

  it('pages the delivery log newest first and filters it by status', async () => {
    const sub = await subscribe(['client.created']);
    for (let i = 0; i < 5; i++) await write('POST', '/v1/clients', { name: `Log ${i}` });
    await settled(sub.id, 5);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (await (await app.request(`/v1/webhooks/${sub.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token })).json()) as { data: Delivery[]; next_cursor: string | null };
      seen.push(...page.data.map((d) => d.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).to.have.length(5);
    expect(new Set(seen).size).to.equal(5);
    const all = await deliveries(sub.id);
    expect(all.map((d) => d.id)).to.deep.equal(seen);
    const failed = (await (await app.request(`/v1/webhooks/${sub.id}/deliveries?status=failed`, { token })).json()) as { data: Delivery[] };
    expect(failed.data).to.deep.equal([]);
    expect((await app.request(`/v1/webhooks/${sub.id}/deliveries?status=lost`, { token })).status).to.equal(400);
  });
});

describe('five days of failures', () => {
  it('disable a subscription whose every attempt failed for five days, not sooner', async () => {
    const clock = manualClock(Date.now());
    const receiver = await startReceiver(() => ({ status: 500 }));
    const app = await startApp({ clock, env: { ...FAST, WEBHOOK_RETRY_DELAYS: '3600,3600,3600,3600,3600,3600,3600,3600' } });
    const worker = startWorker(app.deps);
    try {
      const { token } = await app.workspaceWithKey();
      const sub = (await (await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/five`, events: ['*'] } })).json()) as Sub;
      receiver.secrets.set('/five', [sub.secret]);
      // This subscription's recorded attempts (the database is shared with other tests): each is
      // recorded before the clock moves again, so no attempt is in flight across a jump.
      const recorded = async () =>
        Number(((await app.deps.db('webhook_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').where('d.subscription_id', sub.id).count({ n: '*' }).first()) as { n: number | string }).n);
      const attempt = async (n: number) => {
        clock.advance(3600 * 1000 * 1.25);
        app.deps.notifier.notify();
        await receiver.waitFor(n, undefined, 5000);
        await waitFor(async () => (await recorded()) >= n, 5000, `${n} attempts`);
      };
      await app.request('/v1/leads', { token, method: 'POST', json: { name: 'Unlucky' } });
      await receiver.waitFor(1);
      await waitFor(async () => (await recorded()) >= 1, 5000, 'first attempt');
      // Four days and more of failures: still on.
      clock.advance(4 * 24 * 3600 * 1000);
      await attempt(2);
      const still = (await (await app.request(`/v1/webhooks/${sub.id}`, { token })).json()) as Sub;
      expect(still.enabled).to.equal(true);
      // Past five days since the first failure: the next failure turns it off.
      clock.advance(24 * 3600 * 1000);
      await attempt(3);
      await waitFor(async () => !((await (await app.request(`/v1/webhooks/${sub.id}`, { token })).json()) as Sub).enabled, 5000, 'disabled');
      expect(await (await app.request(`/v1/webhooks/${sub.id}`, { token })).json()).to.deep.include({ enabled: false, disabled_reason: 'failing' });
      expect(receiver.rejected).to.deep.equal([]);
    } finally {
      await worker.stop();
      await app.close();
      await receiver.close();
    }
  });
});

describe('recording attempts', () => {
  it('records attempts that finish together in one statement, losing none: 60 deliveries, far fewer INSERTs', async () => {
    const receiver = await startReceiver(() => ({ delayMs: 200 }));
    const app = await startApp({ env: FAST });
    // Every INSERT into webhook_attempts this process runs, with its values (the worker shares deps.db).
    const inserts: unknown[][] = [];
    const listen = (query: { sql: string; bindings?: unknown[] }) => {
      if (/^insert into [`"]webhook_attempts[`"]/i.test(query.sql)) inserts.push(query.bindings ?? []);
    };
    app.deps.db.on('query', listen);
    let worker: Worker | undefined;
    try {
      const { token } = await app.workspaceWithKey();
      const sub = (await (await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/batch`, events: ['client.created'] } })).json()) as Sub;
      receiver.secrets.set('/batch', [sub.secret]);
      // Written before any worker runs, so one fan-out finds them all and they go out together.
      for (let i = 0; i < 60; i++) expect((await app.request('/v1/clients', { token, method: 'POST', json: { name: `Batch ${i}` } })).status).to.equal(201);
      worker = startWorker(app.deps);
      await receiver.waitFor(60, (r) => r.path === '/batch', 15_000);
      let ours: Delivery[] = [];
      await waitFor(async () => {
        ours = ((await (await app.request(`/v1/webhooks/${sub.id}/deliveries?limit=200`, { token })).json()) as { data: Delivery[] }).data;
        return ours.length === 60 && ours.every((d) => d.status === 'succeeded');
      }, 15_000, '60 recorded deliveries');
      expect(ours.every((d) => d.attempts === 1)).to.equal(true);
      // Each delivery's attempt was inserted exactly once, and most statements carried many of them
      // (the database is shared with other tests: statements without ours are not counted).
      const ids = new Set(ours.map((d) => d.id));
      const carrying = inserts.map((bindings) => bindings.filter((b) => typeof b === 'string' && ids.has(b)).length).filter((n) => n > 0);
      expect(carrying.reduce((a, b) => a + b, 0)).to.equal(60);
      expect(carrying.length, `statements: ${JSON.stringify(carrying)}`).to.be.below(15);
      expect(receiver.rejected).to.deep.equal([]);
    } finally {
      app.deps.db.off('query', listen);
      await worker?.stop();
      await app.close();
      await receiver.close();
    }
  });

  it("records a batch whose deliveries are not all its worker's any more: another's lease is left to it, a deleted one is passed over, the rest recorded once", async () => {
    const receiver = await startReceiver(() => ({}));
    const app = await startApp({ env: FAST });
    try {
      const { recordOutcomes } = await import('../../src/webhooks/record.js');
      const { claimDue } = await import('../../src/webhooks/claim.js');
      const { fanOut } = await import('../../src/webhooks/fanout.js');
      const db = app.deps.db;
      const { token } = await app.workspaceWithKey();
      const sub = (await (await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/taken`, events: ['client.created'] } })).json()) as Sub;
      for (let i = 0; i < 4; i++) expect((await app.request('/v1/clients', { token, method: 'POST', json: { name: `Taken ${i}` } })).status).to.equal(201);
      while ((await fanOut(db, Date.now(), 100, 3)).events > 0);
      const owner = `test-${Date.now()}`;
      const jobs = (await claimDue(db, owner, Date.now(), 60_000, 1000)).filter((j) => j.delivery.subscription_id === sub.id).sort((a, b) => (a.delivery.id < b.delivery.id ? -1 : 1));
      expect(jobs).to.have.length(4);
      const [taken, gone, ...rest] = jobs;
      await db('webhook_deliveries').where({ id: taken!.delivery.id }).update({ lease_owner: 'another-worker' });
      await db('webhook_deliveries').where({ id: gone!.delivery.id }).delete();
      const outcome = { startedAt: Date.now(), durationMs: 3, status: 200, excerpt: 'ok', error: null };
      const { failed } = await recordOutcomes(db, jobs.map((job) => ({ job, outcome })), [1, 1, 1], Date.now());
      expect(failed).to.deep.equal([]);
      const rows = (await db('webhook_deliveries').where({ subscription_id: sub.id }).orderBy('id').select('id', 'status', 'attempts', 'lease_owner')) as Array<{ id: string; status: string; attempts: number | string; lease_owner: string | null }>;
      expect(rows.map((r) => [r.id, r.status, Number(r.attempts), r.lease_owner])).to.deep.equal([
        [taken!.delivery.id, 'pending', 0, 'another-worker'],
        ...rest.map((j) => [j.delivery.id, 'succeeded', 1, null]),
      ]);
      // Each attempt that was made is kept once, the taken-over one's included; none for the deleted one.
      const attempts = (await db('webhook_attempts').whereIn('delivery_id', jobs.map((j) => j.delivery.id)).select('delivery_id')) as Array<{ delivery_id: string }>;
      expect(attempts.map((a) => a.delivery_id).sort()).to.deep.equal([taken!.delivery.id, ...rest.map((j) => j.delivery.id)].sort());
    } finally {
      await app.close();
      await receiver.close();
    }
  });
});
