import { expect } from 'chai';
import { internal, person, type Person } from '../helpers/admin.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { usesRedis } from '../helpers/backend.js';
import { checkedFetcher } from '../helpers/contract.js';
import { problem } from '../helpers/problem.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';

type Json = Record<string, unknown>;
interface Key {
  id: string;
  name: string;
  scopes: string[];
  rate_limit: number;
  expires_at: string | null;
  revoked_at: string | null;
  token: string;
  replaces?: { id: string; revoked_at: string };
}

/** docs/reference.md section 15: rolling a key, with and without an overlap, seen by two server processes. */
describe('rolling a key', () => {
  let app: TestApp;
  let other: ServerProcess;
  let otherApi: Awaited<ReturnType<typeof checkedFetcher>>;
  let alice: Person;

  before(async () => {
    app = await startApp({ env: { TRUST_PROXY: 'true' } });
    other = await startServer();
    otherApi = await checkedFetcher(other.url);
    alice = await person(app);
  });
  after(async () => {
    await other.stop();
    await app.close();
  });

  const makeKey = async (json: Json = {}, who = alice): Promise<Key> => {
    const res = await internal(app, '/keys', { method: 'POST', json: { name: 'rolling', scopes: ['read:deals', 'write:deals'], rate_limit: 120, ...json }, cookie: who.cookie });
    expect(res.status, await res.clone().text()).to.equal(201);
    return (await res.json()) as Key;
  };
  const roll = (id: string, json: Json = {}, who = alice, origin?: string | null) => internal(app, `/keys/${id}/roll`, { method: 'POST', json, cookie: who.cookie, ...(origin !== undefined ? { origin } : {}) });
  /** The status a token gets from this process and from the other one. */
  const statuses = async (token: string) => [(await app.request('/v1/health', { token })).status, (await otherApi('/v1/health', { headers: { authorization: `Bearer ${token}` } })).status];
  /** Without Redis on MySQL a process learns of a revocation when its key cache reloads (within a second). */
  const atOnce = () => usesRedis() || app.deps.config.database.client === 'sqlite';

  it('without overlap: a new token with the same name, scopes and limit; the old one refused at once by both processes', async () => {
    const old = await makeKey();
    expect(await statuses(old.token)).to.deep.equal([200, 200]);
    const sent = Date.now();
    const res = await roll(old.id);
    expect(res.status, await res.clone().text()).to.equal(201);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const rolled = (await res.json()) as Key;
    expect(rolled.id).to.not.equal(old.id);
    expect(rolled.token).to.not.equal(old.token);
    expect(rolled).to.include({ name: 'rolling', rate_limit: 120, expires_at: null, revoked_at: null });
    expect(rolled.scopes).to.deep.equal(['read:deals', 'write:deals']);
    expect(rolled.replaces?.id).to.equal(old.id);
    expect(Date.parse(String(rolled.replaces?.revoked_at))).to.be.within(sent, Date.now());
    if (atOnce()) expect(await statuses(old.token)).to.deep.equal([401, 401]);
    else await waitFor(async () => (await statuses(old.token)).every((s) => s === 401), 1500, 'the old key refused within a second');
    expect(await statuses(rolled.token)).to.deep.equal([200, 200]);
    const body = await problem(await app.request('/v1/health', { token: old.token }), 401, 'invalid_token');
    expect(body.detail).to.equal('The token is unknown or revoked.');
  });

  it('with an overlap: both tokens work on both processes until it ends, then the old one is refused', async () => {
    const old = await makeKey();
    expect(await statuses(old.token)).to.deep.equal([200, 200]);
    // Long enough that the checks below fall inside it on a busy machine.
    const sent = Date.now();
    const res = await roll(old.id, { overlap_seconds: 10 });
    expect(res.status).to.equal(201);
    const rolled = (await res.json()) as Key;
    const ends = Date.parse(String(rolled.replaces?.revoked_at));
    expect(ends).to.be.within(sent + 10_000, Date.now() + 10_000);
    expect(await statuses(old.token)).to.deep.equal([200, 200]);
    expect(await statuses(rolled.token)).to.deep.equal([200, 200]);
    // During the overlap the list shows when the old key ends, and both count as live.
    const keys = ((await (await internal(app, '/keys', { cookie: alice.cookie })).json()) as { data: Key[] }).data;
    expect(keys.find((k) => k.id === old.id)?.revoked_at).to.equal(rolled.replaces?.revoked_at);
    await problem(await roll(old.id), 409, 'key_not_live');

    await waitFor(() => Date.now() > ends, 11_000, 'the overlap to end');
    expect(await statuses(old.token)).to.deep.equal([401, 401]);
    expect(await statuses(rolled.token)).to.deep.equal([200, 200]);
  });

  it('is in the audit log as key.rolled, naming both keys', async () => {
    const old = await makeKey({ name: 'audited' });
    const rolled = (await (await roll(old.id, { overlap_seconds: 60 })).json()) as Key;
    const audit = (await (await internal(app, '/audit-log?action=key.rolled', { cookie: alice.cookie })).json()) as { data: Array<{ target: Json; details: Json; actor: Json }> };
    const entry = audit.data.find((e) => e.target.id === old.id);
    expect(entry?.details).to.deep.include({ name: 'audited', overlap_seconds: 60, old_key_refused_from: rolled.replaces?.revoked_at });
    expect(entry?.details.new_key).to.deep.include({ id: rolled.id });
    expect(entry?.actor).to.include({ type: 'user', label: alice.email });
    expect(JSON.stringify(audit)).to.not.contain(rolled.token.slice(4));
    // Revoking a key in its overlap ends it now.
    expect((await internal(app, `/keys/${old.id}`, { method: 'DELETE', cookie: alice.cookie })).status).to.equal(204);
    if (atOnce()) expect((await app.request('/v1/health', { token: old.token })).status).to.equal(401);
    else await waitFor(async () => (await app.request('/v1/health', { token: old.token })).status === 401, 1500, 'revoked within a second');
  });

  it("carries the old key's lifetime over, or takes expires_in_days, within the workspace key lifetime", async () => {
    const old = await makeKey({ expires_in_days: 10 });
    const rolled = (await (await roll(old.id)).json()) as Key;
    expect(Date.parse(String(rolled.expires_at)) - Date.now()).to.be.closeTo(10 * 24 * 3600 * 1000, 10_000);
    expect((await internal(app, '/workspace', { method: 'PATCH', json: { max_key_lifetime_days: 5 }, cookie: alice.cookie })).status).to.equal(200);
    const refused = await problem(await roll(rolled.id), 422, 'validation_failed');
    expect(refused.errors?.[0]?.pointer).to.equal('/expires_in_days');
    // Nothing was written: the key still works and is not rolled.
    expect((await app.request('/v1/health', { token: rolled.token })).status).to.equal(200);
    const shorter = (await (await roll(rolled.id, { expires_in_days: 5 })).json()) as Key;
    expect(Date.parse(String(shorter.expires_at)) - Date.now()).to.be.closeTo(5 * 24 * 3600 * 1000, 10_000);
    expect((await internal(app, '/workspace', { method: 'PATCH', json: { max_key_lifetime_days: null }, cookie: alice.cookie })).status).to.equal(200);
  });

  it('refuses a revoked key, a bad overlap, a viewer, another origin, and another workspace’s key', async () => {
    const key = await makeKey();
    for (const overlap of [-1, 604801, 1.5, '60']) await problem(await roll(key.id, { overlap_seconds: overlap }), 422, 'validation_failed');
    await problem(await roll(key.id, { colour: 'red' }), 422, 'validation_failed');
    const viewer = await person(app, { workspaceId: alice.workspaceId, role: 'viewer' });
    await problem(await roll(key.id, {}, viewer), 403, 'insufficient_role');
    await problem(await roll(key.id, {}, alice, null), 403, 'forbidden_origin');
    const bob = await person(app);
    await problem(await roll(key.id, {}, bob), 404, 'not_found');
    await problem(await roll('key_doesnotexist'), 404, 'not_found');
    expect(await statuses(key.token)).to.deep.equal([200, 200], 'none of these touched it');
    expect((await internal(app, `/keys/${key.id}`, { method: 'DELETE', cookie: alice.cookie })).status).to.equal(204);
    const revoked = await problem(await roll(key.id), 409, 'key_not_live');
    expect(revoked.detail).to.contain('is revoked');
  });
});
