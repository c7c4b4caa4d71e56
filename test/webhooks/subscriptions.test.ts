import { expect } from 'chai';
import { manualClock, startApp, type TestApp } from '../helpers/app.js';
import { startDnsServer, type DnsServer } from '../helpers/dns.js';
import { problem } from '../helpers/problem.js';

type Sub = { id: string; url: string; events: string[]; description: string | null; enabled: boolean; created_at: string; secret?: string };

describe('webhook subscriptions', () => {
  const clock = manualClock(Date.UTC(2026, 10, 21, 12));
  let dns: DnsServer;
  let app: TestApp;
  let token: string;

  async function create(json: unknown, as = token): Promise<Response> {
    return app.request('/v1/webhooks', { token: as, method: 'POST', json });
  }

  before(async () => {
    dns = await startDnsServer();
    dns.records.set('hooks.example.com', ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    dns.records.set('internal.example.com', ['127.0.0.1']);
    dns.records.set('mixed.example.com', ['93.184.215.14', '10.0.0.7']);
    dns.records.set('metadata.example.com', ['169.254.169.254']);
    dns.records.set('compat.example.com', ['::a9fe:a9fe']);
    dns.records.set('v6loop.example.com', ['::1']);
    app = await startApp({ clock, env: { WEBHOOK_DNS_SERVERS: dns.address } });
    ({ token } = await app.workspaceWithKey());
  });
  after(async () => {
    await app.close();
    await dns.close();
  });

  it('creates a subscription: 201, Location, and the secret shown once', async () => {
    const res = await create({ url: 'https://hooks.example.com/in', events: ['deal.*', 'invoice.paid'], description: 'CRM sync' });
    expect(res.status).to.equal(201);
    const sub = (await res.json()) as Sub;
    expect(res.headers.get('location')).to.equal(`/v1/webhooks/${sub.id}`);
    expect(sub).to.deep.include({ url: 'https://hooks.example.com/in', events: ['deal.*', 'invoice.paid'], description: 'CRM sync', enabled: true, created_at: new Date(clock.now()).toISOString() });
    expect(sub.id).to.match(/^wh_[0-9a-z]{25}$/);
    expect(sub.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(String(sub.secret).slice(6), 'base64')).to.have.length(32);

    const read = (await (await app.request(`/v1/webhooks/${sub.id}`, { token })).json()) as Sub;
    expect(read).to.not.have.property('secret');
    expect(read).to.deep.equal(Object.fromEntries(Object.entries(sub).filter(([k]) => k !== 'secret')));
    const list = (await (await app.request('/v1/webhooks', { token })).json()) as { data: Sub[] };
    expect(list.data.every((s) => !('secret' in s))).to.equal(true);
  });

  it('accepts exact names, "*" and <resource>.*, and refuses anything else naming the pattern', async () => {
    const ok = await create({ url: 'https://hooks.example.com/', events: ['*', 'lead.*', 'proposal.accepted', 'client.deleted'] });
    expect(ok.status).to.equal(201);
    for (const [events, bad] of [
      [['deal.nope'], ['deal.nope']],
      [['deals.*'], ['deals.*']],
      [['deal.*', '**', 'invoice.paid', 'webhook.test'], ['**', 'webhook.test']],
      [['deal'], ['deal']],
      [['*.created'], ['*.created']],
    ] as const) {
      const body = await problem(await create({ url: 'https://hooks.example.com/', events }), 422, 'validation_failed');
      expect(body.errors?.map((e) => e.message.split('"')[1])).to.deep.equal(bad);
      for (const e of body.errors ?? []) expect(e.pointer).to.match(/^\/events\/\d+$/);
      for (const pattern of bad) expect(body.detail).to.contain(pattern);
    }
    for (const json of [{ url: 'https://hooks.example.com/', events: [] }, { url: 'https://hooks.example.com/' }, { events: ['*'] }, { url: 'not a url', events: ['*'] }, { url: 'https://hooks.example.com/', events: ['*'], secret: 'mine' }]) {
      await problem(await create(json), 422, 'validation_failed');
    }
  });

  it('refuses URLs that are not https or that lead to non-public addresses, at creation and on update', async () => {
    const refused: Array<[string, RegExp]> = [
      ['http://hooks.example.com/', /https/],
      ['ftp://hooks.example.com/', /https/],
      ['https://127.0.0.1/hook', /a loopback address \(this very machine\)/],
      ['https://10.1.2.3/hook', /a private network address/],
      ['https://172.16.0.1/hook', /a private network address/],
      ['https://192.168.1.1/hook', /a private network address/],
      ['https://169.254.169.254/latest/meta-data', /a link-local address/],
      ['https://[::1]/hook', /a loopback address \(this very machine\)/],
      ['https://[::ffff:127.0.0.1]/hook', /a loopback address \(this very machine\)/],
      ['https://[::ffff:10.0.0.1]/hook', /a private network address/],
      ['https://[fd00::1]/hook', /a unique local IPv6 address/],
      // IPv4-compatible IPv6 (::/96, deprecated): the IPv4 address inside must not be reached.
      ['https://[::7f00:1]/hook', /an IPv4-compatible IPv6 address/],
      ['https://[::127.0.0.1]/hook', /an IPv4-compatible IPv6 address/],
      ['https://[::a9fe:a9fe]/hook', /an IPv4-compatible IPv6 address/],
      ['https://compat.example.com/hook', /resolves to ::(a9fe:a9fe|169\.254\.169\.254), which is (an IPv4-compatible IPv6|a link-local) address/],
      ['https://0.0.0.0/hook', /the unspecified address/],
      ['https://100.64.0.1/hook', /a carrier-grade NAT address/],
      ['https://internal.example.com/hook', /resolves to 127\.0\.0\.1/],
      ['https://mixed.example.com/hook', /resolves to 10\.0\.0\.7/],
      ['https://metadata.example.com/hook', /169\.254\.169\.254/],
      ['https://v6loop.example.com/hook', /::1/],
      ['https://nowhere.example.com/hook', /does not resolve/],
    ];
    for (const [url, why] of refused) {
      const body = await problem(await create({ url, events: ['*'] }), 422, 'validation_failed');
      expect(body.errors?.[0]?.pointer, url).to.equal('/url');
      expect(body.errors?.[0]?.message, url).to.match(why);
    }
    const sub = (await (await create({ url: 'https://hooks.example.com/', events: ['*'] })).json()) as Sub;
    const body = await problem(await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { url: 'https://internal.example.com/' } }), 422, 'validation_failed');
    expect(body.errors?.[0]?.pointer).to.equal('/url');
    expect(((await (await app.request(`/v1/webhooks/${sub.id}`, { token })).json()) as Sub).url).to.equal('https://hooks.example.com/');
  });

  it('refuses a port no URL can have and a URL without a host, in words and before any lookup, at creation and on update (they were 500s)', async () => {
    const refused: Array<[string, string]> = [
      ['https://hooks.example.com:65536/x', 'has the port 65536; a port is a number from 1 to 65535'],
      ['https://hooks.example.com:99999/x', 'has the port 99999; a port is a number from 1 to 65535'],
      ['https://hooks.example.com:8443x/x', 'has the port "8443x", which is not a number'],
      ['nats://hooks.example.com:70000/deals', 'has the port 70000; a port is a number from 1 to 65535'],
      ['amqp://user:pass@hooks.example.com:99999/events', 'has the port 99999; a port is a number from 1 to 65535'],
      ['nats:///fz', "has no host: write the server's name or address after nats://"],
      ['amqp://:4222/events', "has no host: write the server's name or address after amqp://"],
    ];
    const looked = dns.queries.length;
    for (const [url, message] of refused) {
      const body = await problem(await create({ url, events: ['*'] }), 422, 'validation_failed');
      expect(body.errors, url).to.deep.equal([{ pointer: '/url', message }]);
    }
    expect(dns.queries.slice(looked)).to.deep.equal([]);
    const sub = (await (await create({ url: 'https://hooks.example.com/', events: ['*'] })).json()) as Sub;
    for (const url of ['https://hooks.example.com:65536/x', 'nats:///fz']) {
      const body = await problem(await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { url } }), 422, 'validation_failed');
      expect(body.errors?.[0]?.pointer).to.equal('/url');
    }
    expect(((await (await app.request(`/v1/webhooks/${sub.id}`, { token })).json()) as Sub).url).to.equal('https://hooks.example.com/');
  });

  it('updates url, events, description and enabled; refuses a bad pattern on update', async () => {
    const sub = (await (await create({ url: 'https://hooks.example.com/a', events: ['*'] })).json()) as Sub;
    clock.advance(1000);
    const res = await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { url: 'https://hooks.example.com/b', events: ['deal.created'], description: 'b', enabled: false } });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.include({ url: 'https://hooks.example.com/b', events: ['deal.created'], description: 'b', enabled: false, updated_at: new Date(clock.now()).toISOString() });
    await problem(await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { events: ['deal.everything'] } }), 422, 'validation_failed');
    await problem(await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { secret: 'x' } }), 422, 'validation_failed');
    const again = (await (await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { enabled: true } })).json()) as Sub;
    expect(again).to.deep.include({ enabled: true, events: ['deal.created'] });
  });

  it('lists newest first, page by page, and deletes', async () => {
    const { token: own } = await app.workspaceWithKey();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      ids.push(((await (await create({ url: `https://hooks.example.com/${i}`, events: ['*'] }, own)).json()) as Sub).id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (await (await app.request(`/v1/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: own })).json()) as { data: Sub[]; next_cursor: string | null };
      seen.push(...page.data.map((s) => s.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).to.deep.equal([...ids].reverse());
    const del = await app.request(`/v1/webhooks/${ids[0]}`, { token: own, method: 'DELETE' });
    expect(del.status).to.equal(204);
    await problem(await app.request(`/v1/webhooks/${ids[0]}`, { token: own }), 404, 'not_found');
    await problem(await app.request(`/v1/webhooks/${ids[0]}`, { token: own, method: 'DELETE' }), 404, 'not_found');
    const page = (await (await app.request('/v1/webhooks', { token: own })).json()) as { data: Sub[] };
    expect(page.data.map((s) => s.id)).to.not.include(ids[0]);
    await problem(await app.request('/v1/webhooks?limit=500', { token: own }), 400, 'invalid_parameter');
  });

  it('answers 404 for another workspace\'s subscription on every route', async () => {
    const theirs = (await (await create({ url: 'https://hooks.example.com/', events: ['*'] })).json()) as Sub;
    const { token: other } = await app.workspaceWithKey();
    for (const [method, path] of [
      ['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/rotate-secret'], ['POST', '/test'], ['GET', '/deliveries'], ['POST', '/deliveries/dlv_abc/retry'],
    ] as const) {
      const res = await app.request(`/v1/webhooks/${theirs.id}${path}`, { token: other, method, ...(method === 'PATCH' ? { json: { description: 'mine' } } : {}) });
      await problem(res, 404, 'not_found');
    }
    expect(((await (await app.request(`/v1/webhooks/${theirs.id}`, { token })).json()) as Sub).description).to.equal(null);
  });

  it('needs webhooks:manage', async () => {
    const { token: reader } = await app.workspaceWithKey({ scopes: ['read:deals', 'write:deals'] });
    const res = await create({ url: 'https://hooks.example.com/', events: ['*'] }, reader);
    const body = await problem(res, 403, 'insufficient_scope');
    expect(body.detail).to.contain('webhooks:manage');
    await problem(await app.request('/v1/webhooks', { token: reader }), 403, 'insufficient_scope');
  });

  describe('plan rules', () => {
    it('refuses webhooks on the free plan', async () => {
      const { token: free } = await app.workspaceWithKey({ plan: 'free', scopes: ['read:deals', 'webhooks:manage'] });
      await problem(await create({ url: 'https://hooks.example.com/', events: ['*'] }, free), 403, 'plan_forbids_webhooks');
    });

    it('counts subscriptions created in the UTC calendar month, deleted ones included', async () => {
      clock.set(Date.UTC(2026, 11, 31, 23, 0));
      const { token: starter } = await app.workspaceWithKey({ plan: 'starter', scopes: ['webhooks:manage'] });
      const made: string[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await create({ url: 'https://hooks.example.com/', events: ['*'] }, starter);
        expect(res.status).to.equal(201);
        made.push(((await res.json()) as Sub).id);
      }
      const body = await problem(await create({ url: 'https://hooks.example.com/', events: ['*'] }, starter), 403, 'webhook_limit_reached');
      expect(body.detail).to.contain('10');
      for (const id of made.slice(0, 3)) expect((await app.request(`/v1/webhooks/${id}`, { token: starter, method: 'DELETE' })).status).to.equal(204);
      await problem(await create({ url: 'https://hooks.example.com/', events: ['*'] }, starter), 403, 'webhook_limit_reached');
      clock.set(Date.UTC(2027, 0, 1, 0, 0));
      expect((await create({ url: 'https://hooks.example.com/', events: ['*'] }, starter)).status).to.equal(201);
    });

    it('lets concurrent creations take the last allowance only once', async () => {
      const { token: starter } = await app.workspaceWithKey({ plan: 'starter', scopes: ['webhooks:manage'] });
      const answers = await Promise.all(Array.from({ length: 14 }, () => create({ url: 'https://hooks.example.com/', events: ['*'] }, starter)));
      expect(answers.filter((r) => r.status === 201)).to.have.length(10);
      expect(answers.filter((r) => r.status === 403)).to.have.length(4);
    });
  });
});
