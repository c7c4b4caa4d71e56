import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { ROOT_DIR } from '../../src/common/config.js';
import { insertSamples } from '../../src/demo/samples.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { backend } from '../helpers/backend.js';
import { capturedLog } from '../helpers/log.js';
import { problem } from '../helpers/problem.js';
import { newKey } from '../../src/secrets/keyring.js';


function expectRateLimitHeaders(res: Response, limit: number) {
  expect(res.headers.get('x-ratelimit-limit')).to.equal(String(limit));
  expect(res.headers.get('x-ratelimit-remaining')).to.match(/^\d+$/);
  expect(res.headers.get('x-ratelimit-reset')).to.match(/^\d+$/);
}

describe('errors and headers of every answer', () => {
  let app: TestApp;
  let token: string;
  let readOnlyToken: string;

  before(async () => {
    app = await startApp();
    const ws = await app.workspaceWithKey({ rateLimit: 1000 });
    token = ws.token;
    readOnlyToken = (await app.workspaceWithKey({ scopes: ['read:leads'], rateLimit: 1000 })).token;
    await insertSamples(app.deps.db, app.registry, ws.workspaceId, 3);
  });
  after(() => app.close());

  it('answers 401 missing_token with WWW-Authenticate when no token is sent, even on an unknown path', async () => {
    const res = await app.request('/v1/no-such-thing');
    await problem(res, 401, 'missing_token');
    expect(res.headers.get('www-authenticate')).to.equal('Bearer realm="workspace"');
    expect(res.headers.get('x-ratelimit-limit')).to.equal(null);
  });

  it('answers 401 invalid_token with error="invalid_token" for an unknown, malformed or non-Bearer token', async () => {
    for (const header of ['Bearer wsk_' + 'A'.repeat(43), 'Bearer not-a-key', `Basic ${token}`, 'Bearer']) {
      const res = await app.request('/v1/deals', { headers: { authorization: header } });
      await problem(res, 401, 'invalid_token');
      expect(res.headers.get('www-authenticate')).to.equal('Bearer realm="workspace", error="invalid_token"');
    }
  });

  it('answers 404 not_found for an unknown path once authenticated, with rate-limit headers', async () => {
    const res = await app.request('/v1/no-such-thing', { token });
    await problem(res, 404, 'not_found');
    expectRateLimitHeaders(res, 1000);
  });

  it('answers 404 not_found for an unknown id, and for an id of the wrong kind', async () => {
    for (const id of ['deal_doesnotexist0000000000000', 'lead_abc', 'x'.repeat(300)]) {
      const res = await app.request(`/v1/deals/${id}`, { token });
      await problem(res, 404, 'not_found');
      expectRateLimitHeaders(res, 1000);
    }
  });

  it('answers 405 method_not_allowed with Allow for a method the path does not take', async () => {
    for (const [method, path] of [['DELETE', '/v1/deals'], ['PUT', '/v1/deals/deal_x'], ['POST', '/v1/health']]) {
      const res = await app.request(path as string, { token, method });
      await problem(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).to.match(/GET/);
      expectRateLimitHeaders(res, 1000);
    }
  });

  it('answers a literal path by its own routes: GET, PATCH or DELETE on /v1/deals/batch is 405 with Allow: POST, not a deal with id "batch"', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE', 'PUT']) {
      const res = await app.request('/v1/deals/batch', { token, method, headers: { 'content-type': 'application/json' }, body: method === 'GET' || method === 'DELETE' ? undefined : '{}' });
      const body = await problem(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow'), method).to.equal('POST');
      expect(body.detail).to.equal(`${method} is not allowed on /v1/deals/batch; allowed: POST.`);
      expectRateLimitHeaders(res, 1000);
    }
    // An id beside it is still an id.
    await problem(await app.request('/v1/deals/batches', { token }), 404, 'not_found');
  });

  it('answers 403 insufficient_scope naming the needed scope', async () => {
    const res = await app.request('/v1/deals', { token: readOnlyToken });
    const body = await problem(res, 403, 'insufficient_scope');
    expect(res.headers.get('www-authenticate')).to.equal('Bearer error="insufficient_scope", scope="read:deals"');
    expect(body.detail).to.contain('read:deals');
    expectRateLimitHeaders(res, 1000);
    expect((await app.request('/v1/leads', { token: readOnlyToken })).status).to.equal(200);
  });

  it('serves paths exactly as documented: a trailing slash or other letter case is 404', async () => {
    for (const path of ['/v1/deals/', '/V1/deals', '/v1/Deals', '/v1/health/']) {
      await problem(await app.request(path, { token }), 404, 'not_found');
    }
  });

  it('checks the route before the scope: an unknown path is 404 even for a narrow key', async () => {
    await problem(await app.request('/v1/nothing-here', { token: readOnlyToken }), 404, 'not_found');
  });

  it('answers 400 invalid_parameter with one entry per bad parameter', async () => {
    const res = await app.request('/v1/deals?limit=0&colour=red', { token });
    const body = await problem(res, 400, 'invalid_parameter');
    expect(body.errors).to.deep.include.members([
      { parameter: 'colour', message: 'is not a parameter of this endpoint' },
      { parameter: 'limit', message: 'must be a plain decimal integer from 1 to 200, such as 1' },
    ]);
  });

  it('refuses U+0000 wherever it comes in, alike on every backend (PostgreSQL cannot store it), and writes nothing', async () => {
    const before = ((await (await app.request('/v1/deals?limit=200', { token })).json()) as { data: unknown[] }).data.length;
    const deal = ((await (await app.request('/v1/deals?limit=1', { token })).json()) as { data: Array<{ id: string }> }).data[0]!;
    // In a path: no id holds it, so nothing is there (it was a 500 on PostgreSQL).
    for (const path of ['/v1/deals/deal_%00', `/v1/deals/${deal.id}%00`, '/v1/webhooks/wh_%00', '/v1/event-log/evt_a%00']) {
      const body = await problem(await app.request(path, { token }), 404, 'not_found');
      expect(body.detail).to.contain('U+0000');
    }
    // In a query string: 400 naming each parameter, beside its other problems.
    const query = await problem(await app.request('/v1/deals?q=a%00b&stage=won%00&limit=0', { token }), 400, 'invalid_parameter');
    expect(query.errors).to.deep.equal([
      { parameter: 'q', message: 'must not contain the character U+0000 (NUL)' },
      { parameter: 'stage', message: 'must not contain the character U+0000 (NUL)' },
      { parameter: 'limit', message: 'must be a plain decimal integer from 1 to 200, such as 1' },
    ]);
    // In a body, in a value or a key, at any depth: 422 with its pointer, beside the body's other problems.
    const created = await problem(await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Tab\u0000le', stage: 'nowhere' } }), 422, 'validation_failed');
    expect(created.errors).to.deep.include({ pointer: '/title', message: 'must not contain the character U+0000 (NUL)' });
    expect(created.errors!.map((e) => e.pointer)).to.include('/stage');
    const updated = await problem(await app.request(`/v1/deals/${deal.id}`, { token, method: 'PATCH', json: { title: '\u0000' } }), 422, 'validation_failed');
    expect(updated.errors).to.deep.equal([{ pointer: '/title', message: 'must not contain the character U+0000 (NUL)' }]);
    // Compressed, it is seen once decoded.
    const gzipped = zlib.gzipSync(JSON.stringify({ title: 'Zipped \u0000' }));
    const zipped = await problem(await app.request('/v1/deals', { token, method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipped }), 422, 'validation_failed');
    expect(zipped.errors).to.deep.equal([{ pointer: '/title', message: 'must not contain the character U+0000 (NUL)' }]);
    const batch = await problem(await app.request('/v1/deals/batch', { token, method: 'POST', json: { data: [{ title: 'fine' }, { title: 'x', 'a/b\u0000': 1 }] } }), 422, 'validation_failed');
    expect(batch.errors).to.deep.include({ pointer: '/data/1/a~1b\u0000', message: 'must not contain the character U+0000 (NUL)' });
    expect(((await (await app.request('/v1/deals?limit=200', { token })).json()) as { data: unknown[] }).data.length).to.equal(before);
    const unchanged = (await (await app.request(`/v1/deals/${deal.id}`, { token })).json()) as { title: string };
    expect(unchanged.title).to.not.contain('\u0000');
  });

  it('refuses half a surrogate pair on its own in a body (every backend stored U+FFFD instead), and takes a whole pair', async () => {
    const body = JSON.stringify({ title: 'Half \ud83d', stage: 'lead' });
    expect(body).to.contain('\\ud83d');
    const refused = await problem(await app.request('/v1/deals', { token, method: 'POST', headers: { 'content-type': 'application/json' }, body }), 422, 'validation_failed');
    expect(refused.errors).to.deep.equal([{ pointer: '/title', message: 'must be well-formed Unicode, without half a surrogate pair (\\ud800 to \\udfff) on its own' }]);
    const whole = await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Whole \ud83d\ude00' } });
    expect(whole.status).to.equal(201);
    expect(((await whole.json()) as { title: string }).title).to.equal('Whole 😀');
  });

  it('refuses a body nested 100,000 deep with 422 naming what was wrong, as any other', async () => {
    const depth = 100_000;
    for (const inner of ['', '"\\u0000"']) {
      const body = `{"title":"Deep","notes":${'['.repeat(depth)}${inner}${']'.repeat(depth)}}`;
      const refused = await problem(await app.request('/v1/deals', { token, method: 'POST', headers: { 'content-type': 'application/json' }, body }), 422, 'validation_failed');
      expect(refused.errors!.map((e) => e.pointer)).to.include('/notes');
      if (inner) expect(refused.errors!.find((e) => e.message.includes('U+0000'))?.pointer).to.equal(`/notes${'/0'.repeat(depth)}`);
    }
  });

  it('answers 400 invalid_cursor for a cursor it did not make', async () => {
    const body = await problem(await app.request('/v1/deals?cursor=bm90LWEtY3Vyc29y', { token }), 400, 'invalid_cursor');
    expect(body.errors).to.deep.equal([{ parameter: 'cursor', message: body.detail }]);
  });

  it('answers 501 not_implemented for any method on /v1/projects and below, after authentication', async () => {
    for (const [method, path] of [['GET', '/v1/projects'], ['POST', '/v1/projects'], ['DELETE', '/v1/projects/prj_1/tasks?x=1'], ['PATCH', '/v1/projects/anything']]) {
      const res = await app.request(path as string, { token: readOnlyToken, method });
      await problem(res, 501, 'not_implemented');
      expectRateLimitHeaders(res, 1000);
    }
    await problem(await app.request('/v1/projects'), 401, 'missing_token');
  });

  it('keeps a sane client X-Request-Id and replaces an unsafe one', async () => {
    const own = await app.request('/v1/health', { token, headers: { 'x-request-id': 'client-req.42' } });
    expect(own.headers.get('x-request-id')).to.equal('client-req.42');
    const unsafe = await app.request('/v1/health', { token, headers: { 'x-request-id': 'a b"<script>' } });
    expect(unsafe.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const none = await app.request('/v1/nothing');
    expect(none.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });

  it('answers JSON as application/json; charset=utf-8', async () => {
    const res = await app.request('/v1/deals', { token });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expectRateLimitHeaders(res, 1000);
  });
});

describe('failed authentications from one address', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ env: { AUTH_FAILURE_LIMIT: '3', REDIS_PREFIX: `${backend().env.REDIS_PREFIX ?? ''}authfail:` } });
  });
  after(() => app.close());

  it('answers 429 instead of 401 past the limit, so tokens cannot be guessed at speed', async () => {
    const bad = { authorization: `Bearer wsk_${'B'.repeat(43)}` };
    for (let i = 0; i < 3; i++) await problem(await app.request('/v1/deals', { headers: bad }), 401, 'invalid_token');
    const res = await app.request('/v1/deals', { headers: bad });
    await problem(res, 429, 'rate_limited');
    expect(res.headers.get('retry-after')).to.equal('60');
    const { token } = await app.workspaceWithKey();
    expect((await app.request('/v1/health', { token })).status).to.equal(200, 'a valid key still works from that address');
  });
});

describe('failed authentications behind a trusted proxy (TRUST_PROXY=true)', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ env: { AUTH_FAILURE_LIMIT: '1', TRUST_PROXY: 'true', REDIS_PREFIX: `${backend().env.REDIS_PREFIX ?? ''}proxy:` } });
  });
  after(() => app.close());

  it('counts them per X-Forwarded-For address, not per proxy', async () => {
    const bad = (ip: string) => ({ authorization: `Bearer wsk_${'D'.repeat(43)}`, 'x-forwarded-for': ip });
    await problem(await app.request('/v1/deals', { headers: bad('203.0.113.7') }), 401, 'invalid_token');
    await problem(await app.request('/v1/deals', { headers: bad('203.0.113.7') }), 429, 'rate_limited');
    await problem(await app.request('/v1/deals', { headers: bad('198.51.100.9') }), 401, 'invalid_token');
  });
});

describe('an unreachable database', () => {
  let app: TestApp;
  before(async () => {
    // Nothing listens on port 1: every query fails to connect.
    app = await startApp({ env: { DATABASE_URL: 'mysql://root@127.0.0.1:1/nothing', SECRET_KEYS: newKey() } });
  });
  after(() => app.close());

  it('answers 503 unavailable with Retry-After and no internals', async () => {
    const res = await app.request('/v1/deals', { headers: { authorization: `Bearer wsk_${'C'.repeat(43)}` } });
    const body = await problem(res, 503, 'unavailable');
    expect(res.headers.get('retry-after')).to.equal('5');
    expect(JSON.stringify(body)).not.to.match(/ECONNREFUSED|127\.0\.0\.1|select/i);
  });
});

describe('an unexpected error in a handler', () => {
  let app: TestApp;
  let dir: string;
  const captured = capturedLog();
  before(async () => {
    // A plugin that overrides its list handler with a function of its own, which fails.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-plugins-'));
    fs.writeFileSync(
      path.join(dir, 'broken.ts'),
      `import { defineResource } from ${JSON.stringify(path.join(ROOT_DIR, 'src/kernel/define.js'))};
export default defineResource({
  name: 'gadget', path: '/gadgets', table: 'gadgets', idPrefix: 'gadget_', description: 'Fails on purpose.',
  scopes: { read: 'read:gadgets', write: 'write:gadgets' },
  fields: { label: { type: 'string' } }, required: ['label'],
  list: { sorts: ['created_at'], filters: [] },
  handlers: { list: async () => { throw new Error('select secret_column from gadgets'); } },
});`,
    );
    app = await startApp({ env: { PLUGINS_DIR: dir }, log: captured.log });
  });
  after(async () => {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers 500 internal_error quoting the request id, and logs the error in full, never to the client', async () => {
    const { token } = await app.workspaceWithKey();
    const res = await app.request('/v1/gadgets', { token });
    const body = await problem(res, 500, 'internal_error');
    expect(body.detail).to.contain(String(body.request_id));
    expect(JSON.stringify(body)).not.to.contain('secret_column');
    const logged = captured.lines().find((l) => l.msg === 'unhandled error');
    expect(JSON.stringify(logged)).to.contain('secret_column');
    expect(logged?.request_id).to.equal(body.request_id);
  });
});
