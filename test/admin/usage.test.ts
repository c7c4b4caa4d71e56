import { expect } from 'chai';
import { HOUR_MS } from '../../src/admin/usage.js';
import { internal, person, type Person } from '../helpers/admin.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { startServer } from '../helpers/processes.js';
import { problem } from '../helpers/problem.js';

type Bucket = { start: string; key_id: string; requests: number; rate_limited: number; client_errors: number; server_errors: number };

describe('the administration area: usage metering', () => {
  let app: TestApp;
  let alice: Person;

  before(async () => {
    app = await startApp({ env: { TRUST_PROXY: 'true', USAGE_FLUSH_SECONDS: '1' } });
    alice = await person(app);
  });
  after(() => app.close());

  async function newKey(who: Person, rateLimit: number): Promise<{ id: string; token: string }> {
    const res = await internal(app, '/keys', { method: 'POST', cookie: who.cookie, json: { name: `usage ${rateLimit}`, scopes: ['read:deals', 'write:deals'], rate_limit: rateLimit } });
    expect(res.status).to.equal(201);
    return (await res.json()) as { id: string; token: string };
  }

  async function usage(who: Person, query = ''): Promise<Bucket[]> {
    const res = await internal(app, `/usage${query}`, { cookie: who.cookie });
    expect(res.status, await res.clone().text()).to.equal(200);
    return ((await res.json()) as { data: Bucket[] }).data;
  }

  /** Total requests of one key in the database, as written so far. */
  async function stored(keyId: string): Promise<number> {
    const row = await app.deps.db('key_usage').sum({ n: 'requests' }).where({ key_id: keyId }).first();
    return Number(row?.n ?? 0);
  }

  it("counts each key's answers by outcome in hourly buckets, written within a flush interval", async () => {
    const a = await newKey(alice, 6000);
    const b = await newKey(alice, 2);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await app.request('/v1/health', { token: a.token })).status);
    for (let i = 0; i < 2; i++) statuses.push((await app.request('/v1/deals/deal_nope', { token: a.token })).status);
    statuses.push((await app.request('/v1/deals', { token: a.token, method: 'POST', json: {} })).status);
    for (let i = 0; i < 4; i++) statuses.push((await app.request('/v1/health', { token: b.token })).status);
    expect(statuses).to.deep.equal([200, 200, 200, 404, 404, 422, 200, 200, 429, 429]);
    // A request without a valid key counts for no key.
    expect((await app.request('/v1/health', { token: 'wsk_' + 'x'.repeat(43) })).status).to.equal(401);

    await waitFor(async () => (await stored(a.id)) === 6 && (await stored(b.id)) === 4, 5000, 'the counts to be written');
    const hour = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS).toISOString();
    const all = await usage(alice);
    expect(all.find((x) => x.key_id === a.id)).to.deep.equal({ start: hour, key_id: a.id, requests: 6, rate_limited: 0, client_errors: 3, server_errors: 0 });
    expect(all.find((x) => x.key_id === b.id)).to.deep.equal({ start: hour, key_id: b.id, requests: 4, rate_limited: 2, client_errors: 0, server_errors: 0 });
    // The window's start written with an offset of hours alone (+02, which RFC 3339's format lets through) is that instant.
    const since = new Date(Date.parse(hour) + 2 * HOUR_MS).toISOString().replace(/\.000Z$/, '+02');
    expect((await usage(alice, `?since=${encodeURIComponent(since)}&key_id=${a.id}`)).map((x) => x.requests)).to.deep.equal([6]);
    expect((await usage(alice, `?key_id=${b.id}`)).map((x) => x.key_id)).to.deep.equal([b.id]);

    // More requests add to the same hour's row.
    await app.request('/v1/health', { token: a.token });
    await waitFor(async () => (await stored(a.id)) === 7, 5000, 'the next flush');
    expect((await usage(alice, `?key_id=${a.id}`))[0]?.requests).to.equal(7);

    // Another workspace sees none of it, even naming the key.
    const bob = await person(app);
    expect(await usage(bob)).to.deep.equal([]);
    expect(await usage(bob, `?key_id=${a.id}`)).to.deep.equal([]);
  });

  it('takes a window of at most 31 days and refuses a bad one', async () => {
    expect(await usage(alice, '?since=2020-01-01T00:00:00Z&until=2020-01-31T00:00:00Z')).to.deep.equal([]);
    await problem(await internal(app, '/usage?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', { cookie: alice.cookie }), 400, 'invalid_parameter');
    const future = await problem(await internal(app, '/usage?since=2999-01-01T00:00:00Z', { cookie: alice.cookie }), 400, 'invalid_parameter');
    expect(future.errors?.[0]?.message).to.match(/^must be before until, which is now \(.+Z\) when left out$/);
    await problem(await internal(app, '/usage?since=2026-01-01T00:00:00Z&until=2026-03-01T00:00:00Z', { cookie: alice.cookie }), 400, 'invalid_parameter');
    await problem(await internal(app, '/usage?since=yesterday', { cookie: alice.cookie }), 400, 'invalid_parameter');
    await problem(await internal(app, '/usage?key_id=../etc', { cookie: alice.cookie }), 400, 'invalid_parameter');
    await problem(await internal(app, '/usage'), 401, 'not_signed_in');
  });

  it('loses at most the last flush interval when a server is killed, and nothing when it is stopped', async () => {
    const key = await newKey(alice, 6000);
    const auth = { authorization: `Bearer ${key.token}` };
    const killed = await startServer({ USAGE_FLUSH_SECONDS: '1' });
    try {
      for (let i = 0; i < 4; i++) expect((await fetch(`${killed.url}/v1/health`, { headers: auth })).status).to.equal(200);
      await waitFor(async () => (await stored(key.id)) === 4, 5000, 'the first flush');
      for (let i = 0; i < 3; i++) await fetch(`${killed.url}/v1/health`, { headers: auth });
    } finally {
      await killed.stop('SIGKILL');
    }
    const afterKill = await stored(key.id);
    expect(afterKill).to.be.within(4, 7);

    const stopped = await startServer({ USAGE_FLUSH_SECONDS: '300' });
    for (let i = 0; i < 5; i++) expect((await fetch(`${stopped.url}/v1/health`, { headers: auth })).status).to.equal(200);
    expect(await stopped.stop('SIGTERM')).to.equal(0);
    expect(await stored(key.id)).to.equal(afterKill + 5, 'a stop writes what it counted');
  });
});
