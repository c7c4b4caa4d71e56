import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT_DIR } from '../../src/common/config.js';
import { scopeCatalog } from '../../src/auth/scopes.js';
import { eventCatalog } from '../../src/events/catalog.js';
import { pascal } from '../../src/openapi/resources.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { Contract, resolvePointer } from '../helpers/contract.js';
import { run } from '../helpers/processes.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const METHODS = ['get', 'post', 'patch', 'delete', 'put'];

/** Follows a `$ref` inside the document, if the node is one. */
const deref = (doc: Json, node: Json): Json => (typeof node.$ref === 'string' ? (resolvePointer(doc, node.$ref) as Json) : node);

describe('the OpenAPI document', () => {
  let app: TestApp;
  let doc: Json;
  before(async () => {
    app = await startApp();
    doc = (await (await app.request('/v1/openapi.json')).json()) as Json;
  });
  after(() => app.close());

  const operations = () =>
    Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.entries(item as Json).filter(([m]) => METHODS.includes(m)).map(([method, op]) => ({ path, method, op: op as Json })));

  it('is served as OpenAPI 3.1 at /v1/openapi.json without a token, whatever Authorization says, and counts as no failed authentication', async () => {
    const res = await app.request('/v1/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(res.headers.get('x-request-id')).to.be.a('string');
    expect(res.headers.get('x-ratelimit-limit')).to.equal(null);
    expect(res.headers.get('cache-control')).to.equal('public, max-age=300');
    const body = (await res.json()) as Json;
    expect(body.openapi).to.equal('3.1.0');
    // The package's version, semantic (CHANGELOG.md records each release).
    expect(body.info).to.include({ title: 'Workspace API', version: (JSON.parse(fs.readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { version: string }).version });
    expect(body.info.version).to.match(/^\d+\.\d+\.\d+$/);
    expect(fs.readFileSync(path.join(ROOT_DIR, 'CHANGELOG.md'), 'utf8')).to.contain(`## [${String(body.info.version)}] - `);
    // More than the 30 failed authentications an address may make a minute: none of these is one.
    const answers = await Promise.all(Array.from({ length: 40 }, () => app.request('/v1/openapi.json', { headers: { authorization: 'Bearer wsk_not_a_key' } })));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(40).fill(200));
    // Only this path is public: its neighbours still want a token.
    expect((await app.request('/v1/openapi.yaml')).status).to.equal(401);
    expect((await app.request('/v1/events')).status).to.equal(401);
    const wrong = await app.request('/v1/openapi.json?pretty=1');
    expect(wrong.status).to.equal(400);
    expect(((await wrong.json()) as Json).code).to.equal('invalid_parameter');
  });

  it('documents every route the server mounts, and no other', () => {
    const mounted = new Set<string>();
    for (const layer of app.router.stack) {
      const path = String(layer.path);
      if (path.includes('{/*rest}')) continue; // a reserved path (checked below)
      for (const method of layer.methods) {
        if (method !== 'HEAD') mounted.add(`${method} ${path.replace(/:(\w+)/g, '{$1}')}`);
      }
    }
    const documented = new Set(operations().map(({ path, method }) => `${method.toUpperCase()} /v1${path}`).filter((r) => !r.includes('/projects')));
    expect([...documented].sort()).to.deep.equal([...mounted].sort());
    expect(mounted.size).to.equal(5 * 6 + 11 + 2 + 5); // five resources of six routes each (batch included); webhooks; the event log; health, scopes, events, the document and versions
    // The reserved /projects answers 501 to everything: said in the description, not as operations
    // (an operation without a 2xx answer stops generators such as openapi-typescript).
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/projects'))).to.deep.equal([]);
    expect(doc.info.description).to.contain('`/projects` and below answers 501');
  });

  it("names each operation's scope as its security requirement, and every scope of the catalog appears", () => {
    for (const { def } of app.registry.resources) {
      expect(doc.paths[def.path].get.security).to.deep.equal([{ bearerAuth: [def.scopes.read] }]);
      expect(doc.paths[def.path].post.security).to.deep.equal([{ bearerAuth: [def.scopes.write] }]);
      expect(doc.paths[`${def.path}/{id}`].get.security).to.deep.equal([{ bearerAuth: [def.scopes.read] }]);
      expect(doc.paths[`${def.path}/{id}`].patch.security).to.deep.equal([{ bearerAuth: [def.scopes.write] }]);
      expect(doc.paths[`${def.path}/{id}`].delete.security).to.deep.equal([{ bearerAuth: [def.scopes.write] }]);
    }
    for (const { path, op } of operations().filter(({ path }) => path.startsWith('/webhooks'))) {
      expect(op.security, path).to.deep.equal([{ bearerAuth: ['webhooks:manage'] }]);
    }
    expect(doc.paths['/health'].get.security).to.deep.equal([{ bearerAuth: [] }]);
    expect(doc.paths['/openapi.json'].get.security).to.deep.equal([]);
    const used = new Set(operations().flatMap(({ op }) => (op.security as Json[]).flatMap((s) => (s.bearerAuth ?? []) as string[])));
    expect([...used].sort()).to.deep.equal(scopeCatalog(app.registry).map((s) => s.name).sort());
    expect(doc.components.securitySchemes.bearerAuth).to.include({ type: 'http', scheme: 'bearer' });
  });

  it("carries the plugins' own JSON Schemas, unchanged, for objects, bodies and list parameters", () => {
    for (const resource of app.registry.resources) {
      const name = pascal(resource.def.name);
      for (const [field, schema] of Object.entries(resource.def.fields)) {
        expect(doc.components.schemas[name].properties[field], `${name}.${field}`).to.deep.equal(schema);
      }
      expect(doc.components.schemas[`${name}Create`]).to.deep.equal(resource.createBodySchema);
      expect(doc.components.schemas[`${name}Update`]).to.deep.equal(resource.updateBodySchema);
      const parameters = (doc.paths[resource.def.path].get.parameters as Json[]).filter((p) => p.in === 'query');
      expect(Object.fromEntries(parameters.map((p) => [p.name, p.schema]))).to.deep.equal(resource.listQuerySchema.properties);
      expect(doc.paths[resource.def.path].post.requestBody.content['application/json'].schema).to.deep.equal({ $ref: `#/components/schemas/${name}Create` });
    }
  });

  it('describes each error answer as problem+json with its codes and headers', () => {
    const codesOf = (op: Json, status: string): string[] => {
      const response = deref(doc, op.responses[status]);
      expect(Object.keys(response.content)).to.deep.equal(['application/problem+json']);
      return response.content['application/problem+json'].schema.allOf[1].properties.code.enum;
    };
    const createDeal = doc.paths['/deals'].post;
    expect(Object.keys(createDeal.responses).sort()).to.deep.equal(['201', '400', '401', '403', '408', '409', '413', '415', '422', '429', '431', '500', '503']);
    expect(codesOf(createDeal, '400').sort()).to.deep.equal(['invalid_api_version', 'invalid_json', 'invalid_parameter']);
    expect(codesOf(createDeal, '409')).to.deep.equal(['idempotency_conflict']);
    expect(codesOf(createDeal, '401')).to.deep.equal(['missing_token', 'invalid_token', 'key_expired']);
    // Deal stages move freely; invoices have a state machine.
    expect(doc.paths['/deals/{id}'].patch.responses).not.to.have.property('409');
    expect(codesOf(doc.paths['/invoices/{id}'].patch, '409')).to.deep.equal(['invalid_transition']);
    expect(codesOf(doc.paths['/webhooks'].post, '403')).to.deep.equal(['ip_not_allowed', 'insufficient_scope', 'plan_forbids_webhooks', 'webhook_limit_reached']);
    // ip_not_allowed comes before the key's rate limit: its 403 may lack the rate-limit headers.
    expect(deref(doc, doc.paths['/deals'].get.responses['403']).headers['X-RateLimit-Limit']?.required).to.not.equal(true);
    expect(codesOf(doc.paths['/deals'].get, '400')).to.deep.equal(['invalid_api_version', 'invalid_parameter', 'invalid_cursor']);
    expect(codesOf(doc.paths['/openapi.json'].get, '431')).to.deep.equal(['headers_too_large']);
    expect(deref(doc, doc.paths['/deals'].get.responses['429']).headers).to.have.property('Retry-After');
    expect(deref(doc, doc.paths['/deals'].get.responses['401']).headers).to.have.property('WWW-Authenticate');
    expect(doc.paths['/deals'].get.responses['200'].headers).to.have.keys('X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Api-Version');
    expect(doc.paths['/deals'].post.responses['201'].headers).to.include.keys('Location', 'Idempotent-Replayed');
    expect((doc.paths['/deals'].post.parameters as Json[]).map((p) => deref(doc, p).name)).to.include('Idempotency-Key');
    // A path with an id can always answer 404: an id that does not exist, or that cannot (one holding U+0000).
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      if (!path.includes('{')) continue;
      for (const op of Object.values(item)) expect(codesOf(op, '404'), path).to.include('not_found');
    }
  });

  it('lists every event of the catalog under webhooks, with its payload schema and the signature headers', () => {
    const names = eventCatalog(app.registry).map((e) => e.name);
    expect(Object.keys(doc.webhooks).sort()).to.deep.equal([...names, 'webhook.test'].sort());
    for (const name of names.filter((n) => !n.startsWith('webhook.'))) {
      const post = doc.webhooks[name].post;
      expect((post.parameters as Json[]).map((p) => p.name)).to.deep.equal(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'X-Service-Signature', 'traceparent']);
      expect((post.parameters as Json[]).find((p) => p.name === 'traceparent')?.required).to.equal(false);
      // The event whole (payload "full"), or thin (payload "thin"): the object's id and version.
      const [payload, thin] = post.requestBody.content['application/json'].schema.anyOf;
      expect(payload.properties.type).to.deep.equal({ type: 'string', const: name });
      const resource = pascal(name.split('.')[0] ?? '');
      expect(payload.properties.data.properties.object).to.deep.equal({ $ref: `#/components/schemas/${resource}` });
      expect(payload.properties.data.properties.previous).to.deep.equal({ $ref: `#/components/schemas/${resource}Changes` });
      expect(thin.properties.type).to.deep.equal({ type: 'string', const: name });
      expect(thin.properties.data.required).to.deep.equal(['object']);
      expect(thin.properties.data.properties.object.required).to.deep.equal(['id', 'version']);
    }
    // The service's own events about subscriptions: the subscription is their object.
    for (const name of ['webhook.failing', 'webhook.disabled']) {
      const [payload] = doc.webhooks[name].post.requestBody.content['application/json'].schema.anyOf;
      expect(payload.properties.data.properties.object).to.deep.equal({ $ref: '#/components/schemas/Webhook' });
    }
  });

  it('holds answers to it: the test helper refuses a body, a status or a header the document does not describe', () => {
    const contract = new Contract(doc);
    const deal = { id: 'deal_1', title: 'T', amount: null, currency: null, stage: 'lead', client_id: null, expected_close_date: null, created_at: '2026-11-21T00:00:00.000Z', updated_at: '2026-11-21T00:00:00.000Z', version: 1, livemode: true };
    const headers = { 'content-type': 'application/json; charset=utf-8', etag: '"1"', 'x-request-id': 'r', 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '59', 'x-ratelimit-reset': '60', 'api-version': '2026-11-21' };
    const answer = (status: number, body: unknown, h: Record<string, string> = headers) => [new Response(null, { status, headers: h }), JSON.stringify(body)] as const;
    expect(() => contract.check('GET', '/v1/deals/deal_1', ...answer(200, deal))).not.to.throw();
    expect(() => contract.check('GET', '/v1/deals/deal_1', ...answer(200, { ...deal, stage: 'closed' }))).to.throw(/stage/);
    expect(() => contract.check('GET', '/v1/deals/deal_1', ...answer(200, { ...deal, extra: 1 }))).to.throw(/additional/);
    expect(() => contract.check('GET', '/v1/deals/deal_1', ...answer(409, deal))).to.throw(/status not documented/);
    const without: Record<string, string> = { ...headers };
    delete without['x-ratelimit-reset'];
    expect(() => contract.check('GET', '/v1/deals/deal_1', ...answer(200, deal, without))).to.throw(/X-RateLimit-Reset/);
    expect(() => contract.check('GET', '/v1/nowhere', ...answer(200, deal))).to.throw(/no documented operation/);
  });

  it('is what `npm run openapi` prints', async () => {
    const printed = await run('src/cli/openapi.ts', []);
    expect(printed.code, printed.stderr).to.equal(0);
    expect(JSON.parse(printed.stdout)).to.deep.equal(doc);
  });

  it('states the delivery timeout and retry schedule the server is configured with', async () => {
    const answers = (d: Json) => d.webhooks['deal.created'].post.responses;
    expect(answers(doc)['2XX'].description).to.contain('within 10 s');
    expect(answers(doc).default.description).to.contain('after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (±20%)');
    const printed = await run('src/cli/openapi.ts', [], { WEBHOOK_TIMEOUT_SECONDS: '3', WEBHOOK_RETRY_DELAYS: '1,90,3600' });
    expect(printed.code, printed.stderr).to.equal(0);
    const other = JSON.parse(printed.stdout) as Json;
    expect(answers(other)['2XX'].description).to.contain('within 3 s');
    expect(answers(other).default.description).to.contain('after 1 s, 90 s and 1 h (±20%)');
  });

  it('types a client: examples/list-deals.ts (openapi-fetch) lists the deals of a workspace, page by page', async () => {
    const { token } = await app.workspaceWithKey();
    const titles = Array.from({ length: 230 }, (_, i) => `Example ${String(i).padStart(3, '0')}`);
    await app.request('/v1/deals', { token, method: 'POST', json: { title: titles[0], stage: 'won', amount: 12345, currency: 'EUR' } });
    for (let i = 1; i < titles.length; i += 50) {
      await Promise.all(titles.slice(i, i + 50).map((title, j) => app.request('/v1/deals', { token, method: 'POST', json: { title, stage: (i + j) % 2 === 0 ? 'won' : 'lost' } })));
    }
    const env = { WSAPI_URL: app.url, WSAPI_TOKEN: token };
    const all = await run('examples/list-deals.ts', [], env);
    expect(all.code, all.stderr).to.equal(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines).to.have.length(230); // two pages of at most 200
    expect(lines[0]).to.match(/^deal_[0-9a-z]+\twon\tExample 000 123\.45 EUR$/);
    const won = await run('examples/list-deals.ts', ['won'], env);
    expect(won.stdout.trim().split('\n')).to.have.length(115);
    // An operator and expand, typed from the document.
    const client = (await (await app.request('/v1/clients', { token, method: 'POST', json: { name: 'Example client' } })).json()) as { id: string };
    await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Big one', amount: 5_000_000, currency: 'EUR', client_id: client.id } });
    const big = await run('examples/list-deals.ts', [], { ...env, MIN_AMOUNT: '1000000', WITH_CLIENT: '1' });
    expect(big.code, big.stderr).to.equal(0);
    expect(big.stdout.trim().split('\n')).to.have.length(1);
    expect(big.stdout.trim()).to.match(/^deal_[0-9a-z]+\tlead\tBig one 50000\.00 EUR\tExample client$/);
    const refused = await run('examples/list-deals.ts', [], { ...env, WSAPI_TOKEN: 'wsk_not_a_key' });
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/^401 invalid_token: /);
  });
});
