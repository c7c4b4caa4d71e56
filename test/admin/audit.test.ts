import { expect } from 'chai';
import { internal, newAddress, person, type Person } from '../helpers/admin.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { admin } from '../helpers/processes.js';
import { problem } from '../helpers/problem.js';

type Entry = { id: string; at: string; actor: { type: string; id: string | null; label: string }; action: string; target: { type: string; id: string }; ip: string | null; details: Record<string, unknown> };

describe('the administration area: the audit log', () => {
  let app: TestApp;
  let alice: Person;

  before(async () => {
    app = await startApp({ env: { TRUST_PROXY: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  });
  beforeEach(async () => {
    alice = await person(app);
  });
  after(() => app.close());

  async function log(who: Person, query = ''): Promise<Entry[]> {
    const res = await internal(app, `/audit-log?limit=200${query}`, { cookie: who.cookie });
    expect(res.status).to.equal(200);
    return ((await res.json()) as { data: Entry[] }).data;
  }

  /** The entries of one target, oldest first. */
  const of = (entries: Entry[], id: string) => entries.filter((e) => e.target.id === id).reverse();

  it('records each change made through the internal API once, with the user as actor, the target and the address', async () => {
    const key = (await (await internal(app, '/keys', { method: 'POST', cookie: alice.cookie, ip: alice.ip, json: { name: 'audited', scopes: ['read:deals'] } })).json()) as { id: string; token: string };
    expect((await internal(app, `/keys/${key.id}`, { method: 'DELETE', cookie: alice.cookie, ip: alice.ip })).status).to.equal(204);
    expect((await internal(app, `/keys/${key.id}`, { method: 'DELETE', cookie: alice.cookie, ip: alice.ip })).status, 'a second revocation changes nothing').to.equal(204);
    const hook = (await (await internal(app, '/webhooks', { method: 'POST', cookie: alice.cookie, ip: alice.ip, json: { url: 'http://127.0.0.1:9/a', events: ['deal.*'] } })).json()) as { id: string; secret: string };
    await internal(app, `/webhooks/${hook.id}`, { method: 'PATCH', cookie: alice.cookie, ip: alice.ip, json: { enabled: false, description: 'paused' } });
    const rotated = (await (await internal(app, `/webhooks/${hook.id}/rotate-secret`, { method: 'POST', cookie: alice.cookie, ip: alice.ip })).json()) as { secret: string };
    await internal(app, `/webhooks/${hook.id}`, { method: 'DELETE', cookie: alice.cookie, ip: alice.ip });

    const entries = await log(alice);
    const actor = { type: 'user', id: alice.userId, label: alice.email };
    expect(of(entries, key.id).map((e) => e.action)).to.deep.equal(['key.created', 'key.revoked']);
    expect(of(entries, hook.id).map((e) => e.action)).to.deep.equal(['webhook.created', 'webhook.updated', 'webhook.secret_rotated', 'webhook.deleted']);
    for (const e of [...of(entries, key.id), ...of(entries, hook.id)]) {
      expect(e.actor).to.deep.equal(actor);
      expect(e.ip).to.equal(alice.ip);
    }
    expect(of(entries, hook.id)[1]?.details).to.deep.equal({ enabled: false, description: 'paused' });
    expect(of(entries, key.id)[0]?.target).to.deep.equal({ type: 'api_key', id: key.id });
    const signedIn = entries.filter((e) => e.action === 'user.signed_in');
    expect(signedIn).to.have.length(1);
    expect(signedIn[0]).to.deep.include({ actor, target: { type: 'user', id: alice.userId }, ip: alice.ip });

    // Nothing secret: no token (its display prefix only), no signing secret, no password, no hash.
    const text = JSON.stringify(entries);
    for (const secret of [key.token, hook.secret, rotated.secret, alice.password, 'whsec_', 'scrypt$']) expect(text).not.to.contain(secret);
    // Newest first, and filtered by action.
    const times = entries.map((e) => e.at);
    expect(times).to.deep.equal([...times].sort().reverse());
    expect((await log(alice, '&action=webhook.updated')).map((e) => e.action)).to.deep.equal(['webhook.updated']);
    await problem(await internal(app, '/audit-log?action=key.exploded', { cookie: alice.cookie }), 400, 'invalid_parameter');
  });

  it('leaves sign-ins out with hide_sign_ins=true, and refuses a value that is not a boolean', async () => {
    await problem(await internal(app, '/session', { method: 'POST', json: { email: alice.email, password: 'wrong' }, ip: newAddress() }), 401, 'invalid_credentials');
    const made = await internal(app, '/keys', { method: 'POST', cookie: alice.cookie, json: { name: 'audited', scopes: ['read:deals'] } });
    expect(made.status).to.equal(201);
    const all = (await log(alice)).map((e) => e.action);
    expect(all).to.include.members(['user.signed_in', 'user.sign_in_failed', 'key.created']);
    const hidden = (await log(alice, '&hide_sign_ins=true')).map((e) => e.action);
    expect(hidden).to.deep.equal(all.filter((a) => !a.startsWith('user.sign')));
    expect(hidden).to.include('key.created');
    expect((await log(alice, '&hide_sign_ins=false')).map((e) => e.action)).to.deep.equal(all);
    await problem(await internal(app, '/audit-log?hide_sign_ins=maybe', { cookie: alice.cookie }), 400, 'invalid_parameter');
  });

  it('records changes made with an API key on the public API, with the key as actor', async () => {
    const token = await app.addKey(alice.workspaceId, ['webhooks:manage']);
    const made = (await (await app.request('/v1/webhooks', { token, method: 'POST', json: { url: 'http://127.0.0.1:9/b', events: ['*'] }, headers: { 'x-forwarded-for': '10.9.8.7' } })).json()) as { id: string };
    await app.request(`/v1/webhooks/${made.id}/rotate-secret`, { token, method: 'POST' });
    await app.request(`/v1/webhooks/${made.id}`, { token, method: 'PATCH', json: { events: ['deal.*'] } });
    await app.request(`/v1/webhooks/${made.id}`, { token, method: 'DELETE' });
    const entries = of(await log(alice), made.id);
    expect(entries.map((e) => e.action)).to.deep.equal(['webhook.created', 'webhook.secret_rotated', 'webhook.updated', 'webhook.deleted']);
    const health = (await (await app.request('/v1/health', { token })).json()) as { key: { id: string; prefix: string } };
    for (const e of entries) {
      expect(e.actor).to.deep.equal({ type: 'api_key', id: health.key.id, label: `another key (${health.key.prefix}...)` });
    }
    expect(entries[0]?.ip).to.equal('10.9.8.7');
  });

  it('records what the admin command does, with the operator as actor', async () => {
    const created = await admin(['key', 'create', '--workspace', alice.workspaceId, '--name', 'from a shell', '--scopes', 'read:deals', '--json']);
    expect(created.code, created.stderr).to.equal(0);
    const key = JSON.parse(created.stdout) as { id: string };
    expect((await admin(['key', 'revoke', key.id])).code).to.equal(0);
    const plan = await admin(['workspace', 'set-plan', alice.workspaceId, 'enterprise']);
    expect(plan.code, plan.stderr).to.equal(0);
    expect(plan.stdout).to.contain('plan pro -> enterprise');
    const entries = await log(alice);
    const operator = { type: 'operator', id: null, label: 'admin command' };
    const ofKey = of(entries, key.id);
    expect(ofKey.map((e) => [e.action, e.actor])).to.deep.equal([['key.created', operator], ['key.revoked', operator]]);
    expect(ofKey[0]?.ip).to.equal(null);
    const changed = entries.filter((e) => e.action === 'workspace.plan_changed');
    expect(changed).to.have.length(1);
    expect(changed[0]).to.deep.include({ actor: operator, target: { type: 'workspace', id: alice.workspaceId }, details: { from: 'pro', to: 'enterprise' } });
    const workspace = (await (await internal(app, '/workspace', { cookie: alice.cookie })).json()) as { plan: { name: string } };
    expect(workspace.plan.name).to.equal('enterprise');
  });

  it('records failed sign-ins of a known user, without the password tried', async () => {
    const ip = newAddress();
    await problem(await internal(app, '/session', { method: 'POST', ip, json: { email: alice.email, password: 'hunter2-wrong' } }), 401, 'invalid_credentials');
    const failed = (await log(alice)).filter((e) => e.action === 'user.sign_in_failed');
    expect(failed).to.have.length(1);
    expect(failed[0]).to.deep.include({ ip, target: { type: 'user', id: alice.userId }, details: { reason: 'wrong password' } });
    expect(JSON.stringify(failed)).not.to.contain('hunter2');
  });

  it('leaves no entry for a refused change', async () => {
    const before = (await log(alice)).length;
    const viewer = await person(app, { role: 'viewer', workspaceId: alice.workspaceId });
    await problem(await internal(app, '/keys', { method: 'POST', cookie: alice.cookie, json: { name: 'bad', scopes: ['read:nothing'] } }), 422, 'validation_failed');
    await problem(await internal(app, '/keys', { method: 'POST', cookie: viewer.cookie, json: { name: 'viewer', scopes: ['read:deals'] } }), 403, 'insufficient_role');
    await problem(await internal(app, '/webhooks', { method: 'POST', cookie: alice.cookie, json: { url: 'http://127.0.0.1:9/', events: ['nope.*'] } }), 422, 'validation_failed');
    await problem(await internal(app, '/keys', { method: 'POST', cookie: alice.cookie, origin: 'https://evil.example', json: { name: 'csrf', scopes: ['read:deals'] } }), 403, 'forbidden_origin');
    await problem(await internal(app, '/keys/key_nothere', { method: 'DELETE', cookie: alice.cookie }), 404, 'not_found');
    const refused = await admin(['workspace', 'set-plan', alice.workspaceId, 'platinum']);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/unknown plan "platinum"/);
    const after = await log(alice);
    // Only the viewer's own sign-in was added.
    expect(after.length).to.equal(before + 1);
    expect(after[0]?.action).to.equal('user.signed_in');
  });
});
