import { expect } from 'chai';
import { internal, person, type Person } from '../helpers/admin.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { problem } from '../helpers/problem.js';

type Json = Record<string, unknown>;
type Key = { id: string; name: string; prefix: string; scopes: string[]; rate_limit: number; created_by: Json | null; revoked_at: string | null; token?: string };

/** Every unsafe route of the internal API, as mounted, with its path parameters filled in. */
function unsafeRoutes(app: TestApp): Array<{ method: string; path: string }> {
  const routes: Array<{ method: string; path: string }> = [];
  for (const layer of app.internalRouter.stack) {
    for (const method of layer.methods) {
      if (['POST', 'PATCH', 'PUT', 'DELETE'].includes(method)) routes.push({ method, path: String(layer.path).replace('/internal/v1', '').replace(/:(\w+)/g, 'x_$1') });
    }
  }
  return routes;
}

describe('the administration area: the internal API', () => {
  let app: TestApp;
  let alice: Person;

  before(async () => {
    app = await startApp({ env: { TRUST_PROXY: 'true', WEBHOOK_ALLOW_PRIVATE: 'true', ADMIN_ORIGINS: 'https://admin.example.com' } });
    alice = await person(app);
  });
  after(() => app.close());

  const createKey = (who: Person, json: unknown, origin?: string) => internal(app, '/keys', { method: 'POST', json, cookie: who.cookie, ...(origin ? { origin } : {}) });

  it("gives each subscription's latest deliveries in one request: at most 5 each, newest first, none for another workspace's", async () => {
    const hook = async (who: Person) => ((await (await internal(app, '/webhooks', { method: 'POST', cookie: who.cookie, json: { url: 'http://127.0.0.1:9/recent', events: ['*'] } })).json()) as { id: string }).id;
    const first = await hook(alice);
    const second = await hook(alice);
    const quiet = await hook(alice);
    const sent: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await internal(app, `/webhooks/${first}/test`, { method: 'POST', cookie: alice.cookie });
      expect(res.status).to.equal(202);
      sent.push(((await res.json()) as { id: string }).id);
    }
    expect((await internal(app, `/webhooks/${second}/test`, { method: 'POST', cookie: alice.cookie })).status).to.equal(202);
    const bob = await person(app);
    const foreign = await hook(bob);
    expect((await internal(app, `/webhooks/${foreign}/test`, { method: 'POST', cookie: bob.cookie })).status).to.equal(202);

    const res = await internal(app, `/webhook-deliveries/recent?webhook_ids=${[first, second, quiet, foreign].join(',')}`, { cookie: alice.cookie });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { data: Array<{ webhook_id: string; deliveries: Array<{ id: string; event_type: string }> }> };
    expect(body.data.map((r) => [r.webhook_id, r.deliveries.length])).to.deep.equal([[first, 5], [second, 1], [quiet, 0], [foreign, 0]]);
    // The newest five, newest first: what the delivery log's first page shows.
    const log = (await (await internal(app, `/webhooks/${first}/deliveries?limit=5`, { cookie: alice.cookie })).json()) as { data: Array<{ id: string }> };
    expect(body.data[0]?.deliveries.map((d) => d.id)).to.deep.equal(log.data.map((d) => d.id));
    expect(body.data[0]?.deliveries.map((d) => d.id)).to.have.members(sent.slice(2));

    await problem(await internal(app, '/webhook-deliveries/recent', { cookie: alice.cookie }), 400, 'invalid_parameter');
    await problem(await internal(app, '/webhook-deliveries/recent?webhook_ids=deal_1', { cookie: alice.cookie }), 400, 'invalid_parameter');
    await problem(await internal(app, `/webhook-deliveries/recent?webhook_ids=${Array.from({ length: 101 }, () => first).join(',')}`, { cookie: alice.cookie }), 400, 'invalid_parameter');
  });

  it('refuses every change that lacks the Origin of the service, whatever the cookie says (403 forbidden_origin)', async () => {
    const routes = unsafeRoutes(app);
    expect(routes.length).to.equal(15);
    for (const { method, path } of routes) {
      for (const origin of [null, 'https://evil.example', 'null', `${app.url}.evil.example`]) {
        const res = await internal(app, path, { method, cookie: alice.cookie, origin, json: {} });
        await problem(res, 403, 'forbidden_origin');
      }
    }
    // Its own origin, and one listed in ADMIN_ORIGINS, pass the check.
    expect((await createKey(alice, { name: 'own origin', scopes: ['read:deals'] })).status).to.equal(201);
    expect((await createKey(alice, { name: 'listed origin', scopes: ['read:deals'] }, 'https://admin.example.com')).status).to.equal(201);
    expect(await app.deps.db('api_keys').where({ workspace_id: alice.workspaceId }).count({ n: '*' }).first()).to.satisfy((r: { n: number | string }) => Number(r.n) === 2);
  });

  it('takes a session, never an API key; and /v1 takes a key, never a session (401 both ways)', async () => {
    const key = (await (await createKey(alice, { name: 'crossing', scopes: ['read:deals'] })).json()) as Key;
    const bearer = { authorization: `Bearer ${key.token}` };
    const refused = await problem(await internal(app, '/keys', { headers: bearer }), 401, 'not_signed_in');
    expect(refused.detail).to.contain('never an API key');
    await problem(await internal(app, '/session', { headers: bearer }), 401, 'not_signed_in');
    await problem(await app.request('/v1/health', { headers: { cookie: alice.cookie } }), 401, 'missing_token');
    await problem(await app.request('/v1/deals', { headers: { cookie: alice.cookie } }), 401, 'missing_token');
    expect((await app.request('/v1/health', { token: key.token })).status).to.equal(200);
  });

  it('creates a key: the token shown once, working on /v1/health at once; the list never shows it', async () => {
    const res = await createKey(alice, { name: 'CRM sync', scopes: ['read:deals', 'write:deals', 'read:deals'] });
    expect(res.status).to.equal(201);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const key = (await res.json()) as Key;
    expect(key).to.deep.include({ name: 'CRM sync', scopes: ['read:deals', 'write:deals'], rate_limit: 60, revoked_at: null });
    expect(key.created_by).to.deep.equal({ type: 'user', id: alice.userId, label: alice.email });
    expect(key.token).to.match(/^wsk_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
    expect(key.prefix).to.equal(key.token?.slice(0, 12));
    const health = (await (await app.request('/v1/health', { token: key.token })).json()) as { key: { id: string; rate_limit: number } };
    expect(health.key).to.include({ id: key.id, rate_limit: 60 });

    const list = (await (await internal(app, '/keys', { cookie: alice.cookie })).json()) as { data: Key[] };
    expect(list.data[0]?.id, 'newest first').to.equal(key.id);
    expect(JSON.stringify(list)).not.to.contain(String(key.token));
    expect(list.data.every((k) => !('token' in k) && !('token_hash' in k))).to.equal(true);
  });

  it('pages the key list newest first with a cursor, and refuses a bad cursor or limit', async () => {
    const bob = await person(app, { plan: 'enterprise' });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(((await (await createKey(bob, { name: `k${i}`, scopes: ['read:leads'] })).json()) as Key).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (await (await internal(app, `/keys?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { cookie: bob.cookie })).json()) as { data: Key[]; next_cursor: string | null };
      seen.push(...page.data.map((k) => k.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).to.deep.equal([...made].reverse());
    await problem(await internal(app, '/keys?cursor=nonsense!', { cookie: bob.cookie }), 400, 'invalid_cursor');
    await problem(await internal(app, '/keys?limit=0', { cookie: bob.cookie }), 400, 'invalid_parameter');
    await problem(await internal(app, '/keys?token=1', { cookie: bob.cookie }), 400, 'invalid_parameter');
  });

  it('holds every plan rule exactly as the admin command does, and a refused key leaves nothing', async () => {
    const starter = await person(app, { plan: 'starter' });
    const forbidden = await problem(await createKey(starter, { name: 'w', scopes: ['read:deals', 'write:deals', 'write:leads'] }), 403, 'plan_forbids_scope');
    expect(forbidden.detail).to.contain('write:deals, write:leads');
    for (const rate_limit of [0, 6001, 1.5]) {
      const bad = await problem(await createKey(starter, { name: 'r', scopes: ['read:deals'], rate_limit }), 422, 'validation_failed');
      expect(bad.errors?.[0]?.pointer).to.equal('/rate_limit');
    }
    const unknown = await problem(await createKey(starter, { name: 'u', scopes: ['read:deals', 'read:everything'] }), 422, 'validation_failed');
    expect(unknown.errors).to.deep.equal([{ pointer: '/scopes/1', message: 'read:everything is not a scope of the catalog' }]);
    await problem(await createKey(starter, { name: 'x', scopes: [] }), 422, 'validation_failed');
    await problem(await createKey(starter, { scopes: ['read:deals'] }), 422, 'validation_failed');
    for (const rate_limit of [1, 6000]) expect((await createKey(starter, { name: `ok ${rate_limit}`, scopes: ['read:deals'], rate_limit })).status).to.equal(201);
    for (let i = 2; i < 5; i++) expect((await createKey(starter, { name: `k${i}`, scopes: ['read:deals'] })).status).to.equal(201);
    const capped = await problem(await createKey(starter, { name: 'sixth', scopes: ['read:deals'] }), 403, 'key_limit_reached');
    expect(capped.detail).to.contain('allows 5 live keys');
    const keys = await app.deps.db('api_keys').where({ workspace_id: starter.workspaceId }).count({ n: '*' }).first();
    expect(Number(keys?.n)).to.equal(5, 'only the accepted keys were written');

    const free = await person(app, { plan: 'free' });
    const scopes = (await (await internal(app, '/scopes', { cookie: free.cookie })).json()) as { data: Array<{ name: string; allowed: boolean }> };
    expect(scopes.data).to.have.length(11);
    expect(scopes.data.filter((s) => s.allowed).map((s) => s.name)).to.have.members(['read:deals', 'read:leads', 'read:clients', 'read:proposals', 'read:invoices', 'webhooks:manage']);
  });

  it('shows the workspace, its plan and its usage', async () => {
    const carol = await person(app, { plan: 'pro' });
    await createKey(carol, { name: 'one', scopes: ['read:deals'] });
    await internal(app, '/webhooks', { method: 'POST', cookie: carol.cookie, json: { url: 'http://127.0.0.1:9/hook', events: ['*'] } });
    const body = (await (await internal(app, '/workspace', { cookie: carol.cookie })).json()) as Json;
    expect(body).to.deep.equal({
      id: carol.workspaceId,
      mode: 'live',
      name: 'admin test pro',
      plan: { name: 'pro', api_access: 'read_write', max_keys: 20, webhooks_per_month: 100 },
      usage: { live_keys: 1, webhooks_this_month: 1 },
      max_key_lifetime_days: null,
    });
    // Test mode's usage is counted apart (docs/reference.md section 21).
    await createKey(carol, { name: 'two', scopes: ['read:deals'], mode: 'test' });
    await createKey(carol, { name: 'three', scopes: ['read:deals'], mode: 'test' });
    const test = (await (await internal(app, '/workspace?mode=test', { cookie: carol.cookie })).json()) as Json;
    expect(test).to.deep.include({ id: carol.workspaceId, mode: 'test', usage: { live_keys: 2, webhooks_this_month: 0 } });
    expect(((await (await internal(app, '/workspace', { cookie: carol.cookie })).json()) as Json).usage).to.deep.equal({ live_keys: 1, webhooks_this_month: 1 });
  });

  it('lets a viewer read everything and change nothing (403 insufficient_role on every change)', async () => {
    const viewer = await person(app, { role: 'viewer', workspaceId: alice.workspaceId });
    for (const { method, path } of unsafeRoutes(app).filter((r) => !r.path.startsWith('/session'))) {
      await problem(await internal(app, path, { method, cookie: viewer.cookie, json: {} }), 403, 'insufficient_role');
    }
    for (const path of ['/session', '/workspace', '/scopes', '/keys', '/webhooks', '/audit-log']) {
      expect((await internal(app, path, { cookie: viewer.cookie })).status, path).to.equal(200);
    }
    const keys = await app.deps.db('api_keys').where({ workspace_id: alice.workspaceId }).count({ n: '*' }).first();
    const before = Number(keys?.n);
    await problem(await createKey(viewer, { name: 'nope', scopes: ['read:deals'] }), 403, 'insufficient_role');
    const after = await app.deps.db('api_keys').where({ workspace_id: alice.workspaceId }).count({ n: '*' }).first();
    expect(Number(after?.n)).to.equal(before);
  });

  it("keeps workspaces apart: 404 for every id of another workspace's keys, webhooks and deliveries, and lists without them", async () => {
    const dave = await person(app);
    const key = (await (await createKey(alice, { name: 'alice only', scopes: ['read:deals'] })).json()) as Key;
    const hook = (await (await internal(app, '/webhooks', { method: 'POST', cookie: alice.cookie, json: { url: 'http://127.0.0.1:9/a', events: ['deal.*'] } })).json()) as { id: string };
    const delivery = (await (await internal(app, `/webhooks/${hook.id}/test`, { method: 'POST', cookie: alice.cookie })).json()) as { id: string };
    expect(delivery.id).to.match(/^dlv_/);
    const asDave = (method: string, path: string, json?: unknown) => internal(app, path, { method, cookie: dave.cookie, ...(json ? { json } : {}) });
    await problem(await asDave('DELETE', `/keys/${key.id}`), 404, 'not_found');
    await problem(await asDave('GET', `/webhooks/${hook.id}`), 404, 'not_found');
    await problem(await asDave('PATCH', `/webhooks/${hook.id}`, { enabled: false }), 404, 'not_found');
    await problem(await asDave('DELETE', `/webhooks/${hook.id}`), 404, 'not_found');
    await problem(await asDave('POST', `/webhooks/${hook.id}/rotate-secret`), 404, 'not_found');
    await problem(await asDave('POST', `/webhooks/${hook.id}/test`), 404, 'not_found');
    await problem(await asDave('GET', `/webhooks/${hook.id}/deliveries`), 404, 'not_found');
    await problem(await asDave('POST', `/webhooks/${hook.id}/deliveries/${delivery.id}/retry`), 404, 'not_found');
    for (const path of ['/keys', '/webhooks', '/audit-log']) {
      const text = await (await asDave('GET', path)).text();
      expect(text).not.to.contain(key.id);
      expect(text).not.to.contain(hook.id);
    }
    // Nothing of Alice's changed.
    expect((await internal(app, `/webhooks/${hook.id}`, { cookie: alice.cookie })).status).to.equal(200);
    const stillLive = (await (await app.request('/v1/health', { token: key.token })).json()) as { status: string };
    expect(stillLive.status).to.equal('ok');
  });

  it('manages webhooks with the rules of section 8: the same checks behind both doors', async () => {
    const erin = await person(app, { plan: 'free' });
    await problem(await internal(app, '/webhooks', { method: 'POST', cookie: erin.cookie, json: { url: 'http://127.0.0.1:9/', events: ['*'] } }), 403, 'plan_forbids_webhooks');
    const bad = await problem(await internal(app, '/webhooks', { method: 'POST', cookie: alice.cookie, json: { url: 'http://127.0.0.1:9/', events: ['deal.nope'] } }), 422, 'validation_failed');
    expect(bad.errors?.[0]?.message).to.contain('deal.nope');
    // A port no URL can have was a 500 (TypeError: Invalid URL) behind this door too.
    const port = await problem(await internal(app, '/webhooks', { method: 'POST', cookie: alice.cookie, json: { url: 'http://127.0.0.1:65536/', events: ['*'] } }), 422, 'validation_failed');
    expect(port.errors).to.deep.equal([{ pointer: '/url', message: 'has the port 65536; a port is a number from 1 to 65535' }]);
    const made = await internal(app, '/webhooks', { method: 'POST', cookie: alice.cookie, json: { url: 'http://127.0.0.1:9/b', events: ['invoice.paid'] } });
    expect(made.status).to.equal(201);
    const hook = (await made.json()) as { id: string; secret: string };
    expect(made.headers.get('location')).to.equal(`/internal/v1/webhooks/${hook.id}`);
    expect(hook.secret).to.match(/^whsec_/);
    const rotated = (await (await internal(app, `/webhooks/${hook.id}/rotate-secret`, { method: 'POST', cookie: alice.cookie })).json()) as { secret: string };
    expect(rotated.secret).not.to.equal(hook.secret);
    // The public door sees the very same subscription.
    const { token } = await app.workspaceWithKey();
    expect((await app.request(`/v1/webhooks/${hook.id}`, { token })).status, 'another workspace').to.equal(404);
  });

  describe('revocation seen by another server process', () => {
    let other: ServerProcess;
    before(async () => {
      other = await startServer();
    });
    after(() => other.stop());

    it('refuses a key revoked through the internal API from its next request there', async () => {
      const key = (await (await createKey(alice, { name: 'to revoke', scopes: ['read:deals'] })).json()) as Key;
      const auth = { authorization: `Bearer ${key.token}` };
      expect((await fetch(`${other.url}/v1/health`, { headers: auth })).status).to.equal(200);
      const res = await internal(app, `/keys/${key.id}`, { method: 'DELETE', cookie: alice.cookie });
      expect(res.status).to.equal(204);
      expect((await fetch(`${other.url}/v1/health`, { headers: auth })).status).to.equal(401);
      const list = (await (await internal(app, '/keys', { cookie: alice.cookie })).json()) as { data: Key[] };
      expect(list.data.find((k) => k.id === key.id)?.revoked_at).to.be.a('string');
      expect((await internal(app, `/keys/${key.id}`, { method: 'DELETE', cookie: alice.cookie })).status, 'again').to.equal(204);
      await problem(await internal(app, '/keys/key_doesnotexist', { method: 'DELETE', cookie: alice.cookie }), 404, 'not_found');
    });
  });

  describe('the two OpenAPI documents', () => {
    it('serves the internal one without a session: OpenAPI 3.1, distinct from the public one, sharing no path with it', async () => {
      const res = await app.request('/internal/v1/openapi.json');
      expect(res.status).to.equal(200);
      const doc = (await res.json()) as { openapi: string; info: { title: string }; servers: Array<{ url: string }>; paths: Json; components: { securitySchemes: Json } };
      const pub = (await (await app.request('/v1/openapi.json')).json()) as typeof doc;
      expect(doc.openapi).to.equal('3.1.0');
      expect(doc.info.title).not.to.equal(pub.info.title);
      expect(Object.keys(doc.components.securitySchemes)).to.deep.equal(['cookieAuth']);
      const absolute = (d: typeof doc) => Object.keys(d.paths).map((p) => `${d.servers[0]?.url}${p}`);
      const shared = absolute(doc).filter((p) => absolute(pub).includes(p));
      expect(shared).to.deep.equal([]);
      expect(absolute(doc)).to.include.members(['/internal/v1/session', '/internal/v1/keys', '/internal/v1/keys/{id}', '/internal/v1/webhooks', '/internal/v1/audit-log', '/internal/v1/openapi.json']);
    });

    it('documents every internal route the server mounts, and no other', async () => {
      const doc = (await (await app.request('/internal/v1/openapi.json')).json()) as { paths: Record<string, Json> };
      const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} /internal/v1${path}`));
      const mounted = app.internalRouter.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`));
      expect([...documented].sort()).to.deep.equal([...mounted].sort());
      // A path with an id can always answer 404 (an id that does not exist, or that cannot: one holding U+0000).
      const withIds = Object.entries(doc.paths).filter(([path]) => path.includes('{'));
      expect(withIds).to.not.deep.equal([]);
      for (const [path, item] of withIds) for (const op of Object.values(item as Record<string, { responses: Json }>)) expect(op.responses, path).to.have.property('404');
    });
  });
});
