import { expect } from 'chai';
import { internal, person, signIn, type Person } from '../helpers/admin.js';
import { manualClock, startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

type Json = Record<string, unknown>;
const DAY = 24 * 3600 * 1000;

/** docs/reference.md section 15: keys that expire, and a workspace's longest key lifetime. */
describe('key expiry and the workspace key lifetime', () => {
  const clock = manualClock(Date.UTC(2026, 10, 1, 9, 0, 0));
  let app: TestApp;
  let alice: Person;

  before(async () => {
    app = await startApp({ clock, env: { TRUST_PROXY: 'true' } });
    alice = await person(app);
  });
  after(() => app.close());

  const createKey = (json: Json, who = alice) => internal(app, '/keys', { method: 'POST', json: { name: 'expiring', scopes: ['read:deals'], ...json }, cookie: who.cookie });
  const setLifetime = (value: unknown, who = alice, origin?: string | null) => internal(app, '/workspace', { method: 'PATCH', json: { max_key_lifetime_days: value }, cookie: who.cookie, ...(origin !== undefined ? { origin } : {}) });

  it('makes a key that expires expires_in_days from now: it works until then, and answers 401 key_expired from then on', async () => {
    const res = await createKey({ expires_in_days: 3 });
    expect(res.status, await res.clone().text()).to.equal(201);
    const key = (await res.json()) as Json;
    expect(key.expires_at).to.equal(new Date(clock.now() + 3 * DAY).toISOString());
    const bearer = { authorization: `Bearer ${String(key.token)}` };
    const health = await app.request('/v1/health', { headers: bearer });
    expect(health.status).to.equal(200);
    expect(((await health.json()) as { key: Json }).key.expires_at).to.equal(key.expires_at);

    // Looked up (and cached) a moment before it expires, refused the moment it does.
    clock.advance(3 * DAY - 1);
    expect((await app.request('/v1/deals', { headers: bearer })).status).to.equal(200);
    clock.advance(1);
    const expired = await app.request('/v1/deals', { headers: bearer });
    const body = await problem(expired, 401, 'key_expired');
    expect(body.detail).to.equal(`The key expired at ${String(key.expires_at)}.`);
    expect(expired.headers.get('www-authenticate')).to.equal(`Bearer realm="workspace", error="invalid_token", error_description="The key expired at ${String(key.expires_at)}"`);

    // The list says so; the key no longer counts against the plan's live keys. (Three days on,
    // the session has ended too: sign in again.)
    alice.cookie = await signIn(app, alice.email, alice.password, alice.ip);
    const listed = ((await (await internal(app, '/keys', { cookie: alice.cookie })).json()) as { data: Json[] }).data.find((k) => k.id === key.id);
    expect(listed?.expires_at).to.equal(key.expires_at);
    expect(listed?.revoked_at).to.equal(null);
    const workspace = (await (await internal(app, '/workspace', { cookie: alice.cookie })).json()) as { usage: { live_keys: number } };
    expect(workspace.usage.live_keys).to.equal(0);
  });

  it('makes a key without expires_in_days that lives until revoked, and refuses one outside 1-3650', async () => {
    const res = await createKey({});
    expect(res.status).to.equal(201);
    expect(((await res.json()) as Json).expires_at).to.equal(null);
    for (const bad of [0, 3651, 1.5, '7']) {
      const refused = await createKey({ expires_in_days: bad });
      const body = await problem(refused, 422, 'validation_failed');
      expect(body.errors?.[0]?.pointer, String(bad)).to.equal('/expires_in_days');
    }
  });

  it('lets an admin set max_key_lifetime_days: keys made then must expire within it; null lifts it; audited', async () => {
    const set = await setLifetime(30);
    expect(set.status, await set.clone().text()).to.equal(200);
    expect(((await set.json()) as Json).max_key_lifetime_days).to.equal(30);
    expect(((await (await internal(app, '/workspace', { cookie: alice.cookie })).json()) as Json).max_key_lifetime_days).to.equal(30);

    for (const json of [{}, { expires_in_days: 31 }]) {
      const body = await problem(await createKey(json), 422, 'validation_failed');
      expect(body.errors?.[0]).to.deep.include({ pointer: '/expires_in_days' });
      expect(body.errors?.[0]?.message).to.equal("must be from 1 to 30: this workspace's keys must expire within 30 days (max_key_lifetime_days)");
    }
    expect((await createKey({ expires_in_days: 30 })).status).to.equal(201);

    clock.advance(1000);
    const lifted = await setLifetime(null);
    expect(((await lifted.json()) as Json).max_key_lifetime_days).to.equal(null);
    expect((await createKey({})).status).to.equal(201);

    const audit = (await (await internal(app, '/audit-log?action=workspace.key_policy_changed', { cookie: alice.cookie })).json()) as { data: Array<{ details: Json; actor: Json }> };
    expect(audit.data.map((e) => e.details)).to.deep.equal([{ max_key_lifetime_days: { from: 30, to: null } }, { max_key_lifetime_days: { from: null, to: 30 } }]);
    expect(audit.data[0]?.actor).to.include({ type: 'user', label: alice.email });
  });

  it('refuses the policy from a viewer, from another origin, and outside 1-3650; another workspace is not touched', async () => {
    const viewer = await person(app, { workspaceId: alice.workspaceId, role: 'viewer' });
    await problem(await setLifetime(10, viewer), 403, 'insufficient_role');
    await problem(await setLifetime(10, alice, 'https://evil.example'), 403, 'forbidden_origin');
    await problem(await setLifetime(10, alice, null), 403, 'forbidden_origin');
    for (const bad of [0, 3651, 2.5, 'ten']) await problem(await setLifetime(bad), 422, 'validation_failed');
    const empty = await problem(await internal(app, '/workspace', { method: 'PATCH', json: {}, cookie: alice.cookie }), 422, 'validation_failed');
    expect(empty.detail).to.equal('The body does not match the schema: must name at least one field to change: max_key_lifetime_days.');
    const plan = await problem(await internal(app, '/workspace', { method: 'PATCH', json: { plan: 'enterprise' }, cookie: alice.cookie }), 422, 'validation_failed');
    // Not "a field of this resource": the workspace's policy is not one, and the answer says what it takes.
    expect(plan.errors).to.deep.equal([{ pointer: '/plan', message: 'is not a field this body takes; it takes max_key_lifetime_days' }]);
    expect(((await (await internal(app, '/workspace', { cookie: alice.cookie })).json()) as Json).max_key_lifetime_days).to.equal(null);

    const bob = await person(app);
    expect((await setLifetime(5, bob)).status).to.equal(200);
    expect(((await (await internal(app, '/workspace', { cookie: alice.cookie })).json()) as Json).max_key_lifetime_days).to.equal(null);
    expect((await createKey({})).status).to.equal(201, "bob's policy is not alice's");
    await problem(await createKey({}, bob), 422, 'validation_failed');
  });
});
