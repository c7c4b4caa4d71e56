import zlib from 'node:zlib';
import { expect } from 'chai';
import fc from 'fast-check';
import { insertSamples } from '../../src/demo/samples.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { backend } from '../helpers/backend.js';
import { person, signIn, newAddress } from '../helpers/admin.js';
import { checkedFetcher, resolvePointer } from '../helpers/contract.js';
import { startDnsServer, type DnsServer } from '../helpers/dns.js';

/**
 * Requests generated from the served OpenAPI document, for every operation: valid and mutated
 * path ids, query values, headers and bodies. Whatever is sent, the answer is documented for
 * that operation and matches its schema (the contract helper checks every one), is never a 5xx,
 * and no body carries a stack trace or SQL.
 */

type Json = Record<string, unknown>;

interface Operation {
  method: string;
  template: string;
  pathParams: string[];
  query: Record<string, Json>;
  body?: Json;
  bodyTypes: string[];
}

const RUNS = Number(process.env.FUZZ_RUNS ?? 2500);
// FUZZ_SEED replays a run fast-check reported (its seed; the state the server was in may differ).
const SEED = process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) };

// What a stack trace or a driver's message would show. Words stand alone: an id is base-36 and
// holds any word now and then (CI once met aud_03hbcz0qknexa9yb0).
const LEAKS = /\bat (?:\S+ \()?\S+\.(?:ts|js):\d+|node_modules|\bselect\b.+\bfrom\b|\binsert into\b|\bupdate `|\bSQLITE_|\bER_[A-Z_]{3,}|\bknex\b|\bTypeError\b|\bReferenceError\b/i;

const weird = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', ' ', 'Infinity', '-Infinity', 'NaN', '1e400', '0x10', '-1', '0', '9'.repeat(30), 'null', 'true', '[]', '{}', '%00', '../..', "' OR 1=1 --", '\u0000', '😀', 'a'.repeat(3000)),
);

function deref(doc: Json, schema: Json | undefined): Json {
  let s = schema ?? {};
  while (typeof s.$ref === 'string') s = resolvePointer(doc, s.$ref) as Json;
  return s;
}

/** A value the schema should accept (mostly): enough to reach handlers, not just validation. */
function valid(doc: Json, raw: Json | undefined, ids: Record<string, string[]>): fc.Arbitrary<unknown> {
  const schema = deref(doc, raw);
  if (Array.isArray(schema.allOf)) return valid(doc, (schema.allOf as Json[])[0], ids);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [String(schema.type ?? 'string')];
  const options = types.map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({ min: Number(schema.minimum ?? -1000), max: Math.min(Number(schema.maximum ?? 1e6), 1e12) });
      case 'number':
        return fc.double({ noNaN: true, noDefaultInfinity: true });
      case 'array':
        return fc.array(valid(doc, schema.items as Json, ids), { minLength: Number(schema.minItems ?? 0), maxLength: Math.min(Number(schema.maxItems ?? 5), 5) });
      case 'object':
        return objectOf(doc, schema, ids);
      default:
        return stringOf(schema, ids);
    }
  });
  return fc.oneof(...options);
}

function stringOf(schema: Json, ids: Record<string, string[]>): fc.Arbitrary<unknown> {
  const max = Math.min(Number(schema.maxLength ?? 50), 60);
  const min = Number(schema.minLength ?? 0);
  if (schema.format === 'date') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
  if (schema.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.format === 'currency') return fc.constantFrom('EUR', 'USD', 'JPY', 'GBP');
  if (schema.format === 'uri') return fc.constantFrom('https://hooks.example.com/in', 'https://10.0.0.1/x', 'http://hooks.example.com/', 'https://nowhere.example.com/');
  if (typeof schema.pattern === 'string') {
    const prefix = /^\^([a-z]+_)/.exec(schema.pattern)?.[1];
    if (prefix) return fc.oneof(fc.constantFrom(...(ids[prefix] ?? [`${prefix}none`])), fc.stringMatching(/^[0-9a-z]{1,20}$/).map((s) => prefix + s));
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= max);
  }
  return fc.string({ minLength: min, maxLength: Math.max(min, max) });
}

function objectOf(doc: Json, schema: Json, ids: Record<string, string[]>): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (property.readOnly === true) continue;
    record[name] = valid(doc, property, ids);
  }
  return fc.record(record, { requiredKeys: Object.keys(record).filter((k) => required.has(k)) });
}

/** A valid body, or one mutated: a field's value replaced, an unknown field, a required one dropped, not an object at all. */
function bodyOf(doc: Json, schema: Json, ids: Record<string, string[]>): fc.Arbitrary<unknown> {
  const good = valid(doc, schema, ids);
  return fc.oneof(
    { weight: 4, arbitrary: good },
    { weight: 2, arbitrary: fc.tuple(good, fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 })).map(([b, k, v]) => (b && typeof b === 'object' ? { ...(b as Json), [k]: v } : b)) },
    { weight: 1, arbitrary: good.map((b) => (b && typeof b === 'object' ? Object.fromEntries(Object.entries(b as Json).slice(1)) : b)) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
}

interface Generated {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** An Authorization header: mostly a key's, sometimes none or a malformed one. */
function bearer(tokens: string[]): fc.Arbitrary<Record<string, string>> {
  return fc
    .oneof({ weight: 12, arbitrary: fc.constantFrom(...tokens.map((t) => `Bearer ${t}`)) }, { weight: 1, arbitrary: fc.constantFrom('', 'Bearer wsk_nope', `Basic ${tokens[0]}`, 'Bearer') })
    .map((authorization): Record<string, string> => (authorization ? { authorization } : {}));
}

/**
 * A request of `op` under `base` (`/v1`, `/internal/v1`), its credentials' headers drawn from
 * `credentials` (a token, or a session cookie and an Origin).
 */
function requestOf(doc: Json, op: Operation, base: string, credentials: fc.Arbitrary<Record<string, string>>, ids: Record<string, string[]>): fc.Arbitrary<Generated> {
  const pathArb = fc.tuple(...op.pathParams.map((name) => fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...(ids[name === 'delivery_id' ? 'dlv_' : op.template.split('/')[1] ?? ''] ?? ['none'])) }, { weight: 1, arbitrary: weird.map(encodeURIComponent) })));
  const names = Object.keys(op.query);
  const known = names.length > 0 ? [{ weight: 6, arbitrary: fc.constantFrom(...names).chain((name) => fc.tuple(fc.constant(name), fc.oneof({ weight: 3, arbitrary: valid(doc, op.query[name], ids).map(String) }, { weight: 1, arbitrary: weird }))) }] : [];
  const queryArb = fc.oneof(
    { weight: 2, arbitrary: fc.constant([] as Array<[string, string]>) },
    { weight: 3, arbitrary: fc.array(fc.oneof(...known, { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 1, maxLength: 10 }), weird) }), { maxLength: 3 }) },
  );
  /** Mostly absent: present one time in `of`. */
  const sometimes = <T>(arb: fc.Arbitrary<T>, of = 6) => fc.oneof({ weight: of - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
  const printable = weird.filter((s) => /^[\x20-\x7e]*$/.test(s));
  const headerArb = fc
    .record({
      'idempotency-key': sometimes(fc.oneof(fc.uuid(), printable), 3),
      'x-request-id': sometimes(fc.oneof(fc.uuid(), printable), 4),
      'if-match': sometimes(fc.oneof(fc.constantFrom('*', '"1"', '"2"', 'W/"1"', '"1", "2"', '1', '"0"', '"99999999999999999999"'), printable)),
      'content-type': sometimes(fc.constantFrom('application/json; charset=utf-8', 'application/merge-patch+json', 'text/plain', 'application/json; charset=latin1', 'multipart/form-data')),
      'content-encoding': sometimes(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'compress')),
    })
    .map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>);
  const bodyArb = op.body ? fc.option(bodyOf(doc, op.body, ids), { freq: 8 }) : fc.constant(null);
  return fc.record({ params: pathArb, query: queryArb, auth: credentials, headers: headerArb, body: bodyArb, raw: sometimes(weird, 12) }).map(({ params, query, auth, headers, body, raw }) => {
    let path = `${base}${op.template}`;
    op.pathParams.forEach((name, i) => (path = path.replace(`{${name}}`, String(params[i]))));
    const search = new URLSearchParams(query as Array<[string, string]>).toString();
    const all: Record<string, string> = { ...headers, ...auth };
    let payload: string | Uint8Array | undefined;
    if (op.method !== 'GET' && (body !== null || raw !== undefined)) {
      payload = raw ?? JSON.stringify(body);
      all['content-type'] ??= 'application/json';
      const encoding = all['content-encoding'];
      if (encoding === 'gzip') payload = zlib.gzipSync(payload);
      else if (encoding === 'deflate') payload = zlib.deflateSync(payload);
      else if (encoding === 'br' && raw === undefined) payload = zlib.brotliCompressSync(payload);
    } else {
      delete all['content-encoding'];
    }
    return { method: op.method, path: search ? `${path}?${search}` : path, headers: all, ...(payload !== undefined ? { body: payload } : {}) };
  });
}

/**
 * Sends a generated request with these headers and holds its answer to what every answer
 * promises (the fetcher holds it to its document): below 500, a problem when refused, and
 * no stack trace or SQL. Counts its status.
 */
async function sent(api: (path: string, init?: RequestInit) => Promise<Response>, req: Generated, headers: Record<string, string>, statuses: Map<number, number>): Promise<Response> {
  const res = await api(req.path, { method: req.method, headers, ...(req.body !== undefined ? { body: req.body } : {}) });
  const text = await res.text();
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  expect(res.status, `${req.method} ${req.path} -> ${text.slice(0, 300)}`).to.be.below(500);
  if (res.status >= 400) expect(res.headers.get('content-type')).to.equal('application/problem+json');
  // What the request itself held is named back, not leaked (a 422 names the invalid value sent: an event `er_AAA`).
  const found = LEAKS.exec(text);
  const asked = `${req.path} ${typeof req.body === 'string' ? req.body : Buffer.from(req.body ?? '').toString('latin1')}`;
  const leak = found && !asked.includes(found[0]) ? found : null;
  expect(leak, `${req.method} ${req.path}: ${leak ? text.slice(Math.max(0, leak.index - 200), leak.index + 200) : ''}`).to.equal(null);
  return res;
}

/** How many answers had each status, in the test's output. */
function printStatuses(statuses: Map<number, number>): void {
  console.log(`      statuses: ${[...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`).join(' ')}`);
}

function operationsOf(doc: Json): Operation[] {
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, raw] of Object.entries(item)) {
      const operation = raw as Json;
      const parameters = ((operation.parameters ?? []) as Json[]).map((p) => deref(doc, p));
      const content = ((operation.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
      const bodyTypes = Object.keys(content);
      ops.push({
        method: method.toUpperCase(),
        template,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => String(p.name)),
        query: Object.fromEntries(parameters.filter((p) => p.in === 'query').map((p) => [String(p.name), p.schema as Json])),
        ...(bodyTypes.length > 0 ? { body: content[bodyTypes[0] as string]?.schema as Json } : {}),
        bodyTypes,
      });
    }
  }
  return ops;
}

describe('what the fuzz counts as a leak', () => {
  it('is a stack frame or a driver\'s words, not an id that happens to spell one', () => {
    for (const leak of ['    at run (src/db/tx.ts:12:3)', 'Knex: Timeout acquiring a connection', 'SQLITE_CONSTRAINT: NOT NULL', 'ER_DUP_ENTRY', 'TypeError: x is undefined', 'select "id" from "deals"']) expect(leak).to.match(LEAKS);
    for (const id of ['aud_03hbcz0qknexa9yb0', 'deal_typeerror0', 'evt_0sqlite_x']) expect(`{"id":"${id}"}`).not.to.match(LEAKS);
  });
});

describe('requests generated from the OpenAPI document (fast-check)', function () {
  this.timeout(300_000);
  let app: TestApp;
  let dns: DnsServer;

  before(async () => {
    dns = await startDnsServer();
    dns.records.set('hooks.example.com', ['93.184.215.14']);
    // Its own Redis prefix: its many failed authentications from 127.0.0.1 must not count against other tests' apps.
    app = await startApp({ env: { WEBHOOK_DNS_SERVERS: dns.address, AUTH_FAILURE_LIMIT: '100000', REDIS_PREFIX: `${backend().env.REDIS_PREFIX ?? ''}fuzz:` } });
  });
  after(async () => {
    await app?.close();
    await dns?.close();
  });

  it(`answers ${RUNS} of them with documented statuses and bodies, never a 5xx, a stack trace or SQL`, async () => {
    const api = await checkedFetcher(app.url);
    const doc = (await (await fetch(`${app.url}/v1/openapi.json`)).json()) as Json;
    const ws = await app.workspaceWithKey({ plan: 'enterprise' });
    // One key per 1,500 requests keeps them under the 6,000-a-minute cap.
    const tokens = [ws.token, ...(await Promise.all(Array.from({ length: Math.ceil(RUNS / 1500) }, () => app.addKey(ws.workspaceId, ['read:deals', 'write:deals', 'read:leads', 'write:leads', 'read:clients', 'write:clients', 'read:proposals', 'write:proposals', 'read:invoices', 'write:invoices', 'webhooks:manage']))))];
    await insertSamples(app.deps.db, app.registry, ws.workspaceId, 5);
    const sub = (await (await api('/v1/webhooks', { method: 'POST', headers: { authorization: `Bearer ${ws.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: 'https://hooks.example.com/in', events: ['*'] }) })).json()) as { id: string };
    const delivery = (await (await api(`/v1/webhooks/${sub.id}/test`, { method: 'POST', headers: { authorization: `Bearer ${ws.token}` } })).json()) as { id: string };
    const ids: Record<string, string[]> = { dlv_: [delivery.id], webhooks: [sub.id] };
    for (const resource of app.registry.resources) {
      const rows = (await app.deps.db(resource.def.table).where('workspace_id', ws.workspaceId).pluck('id')) as string[];
      ids[resource.def.path.slice(1)] = rows;
      ids[resource.def.idPrefix] = rows;
    }
    const ops = operationsOf(doc);
    expect(ops.length).to.be.greaterThan(30);
    const statuses = new Map<number, number>();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ops).chain((op) => requestOf(doc, op, '/v1', bearer(tokens), ids)), async (req) => {
        // Spread over the keys: each key stays under its per-minute limit.
        const token = tokens[n++ % tokens.length] as string;
        const headers = req.headers.authorization?.startsWith('Bearer wsk_') && req.headers.authorization !== 'Bearer wsk_nope' ? { ...req.headers, authorization: `Bearer ${token}` } : req.headers;
        await sent(api, req, headers, statuses);
      }),
      { numRuns: RUNS, ...SEED },
    );
    printStatuses(statuses);
    // The run reached handlers, not only validation: successes and several kinds of refusal.
    for (const status of [200, 201, 400, 404, 422]) expect(statuses.get(status) ?? 0, `answers with ${status}`).to.be.greaterThan(0);
  });
});

describe('requests generated from the internal OpenAPI document (fast-check)', function () {
  this.timeout(300_000);
  const runs = Math.ceil(RUNS / 2);
  let app: TestApp;
  let dns: DnsServer;

  before(async () => {
    dns = await startDnsServer();
    dns.records.set('hooks.example.com', ['93.184.215.14']);
    // Sign-ins the run itself makes come from an address of their own (X-Forwarded-For, trusted
    // here), out of reach of the throttle the generated ones trip from 127.0.0.1.
    app = await startApp({ env: { WEBHOOK_DNS_SERVERS: dns.address, TRUST_PROXY: 'true', REDIS_PREFIX: `${backend().env.REDIS_PREFIX ?? ''}fuzz-internal:` } });
  });
  after(async () => {
    await app?.close();
    await dns?.close();
  });

  it(`answers ${runs} of them, with a session, another workspace's, a viewer's or none, and any Origin, as documented and never with a 5xx`, async () => {
    const api = await checkedFetcher(app.url);
    const doc = (await (await fetch(`${app.url}/internal/v1/openapi.json`)).json()) as Json;
    const admin = await person(app, { plan: 'enterprise' });
    const viewer = await person(app, { workspaceId: admin.workspaceId, role: 'viewer' });
    const stranger = await person(app, { plan: 'enterprise' });
    const people = [admin, admin, admin, viewer, stranger];
    const cookies = people.map((p) => p.cookie);
    const call = async (path: string, method = 'GET', json?: unknown) => {
      const res = await api(`/internal/v1${path}`, { method, headers: { cookie: admin.cookie, origin: app.url, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) });
      expect(res.status, `${method} ${path}`).to.be.below(300);
      return (await res.json()) as Json;
    };
    const keys = await Promise.all([1, 2, 3].map((n) => call('/keys', 'POST', { name: `fuzzed ${n}`, scopes: ['read:deals'] })));
    const sub = await call('/webhooks', 'POST', { url: 'https://hooks.example.com/in', events: ['*'] });
    const delivery = await call(`/webhooks/${String(sub.id)}/test`, 'POST');
    const ids: Record<string, string[]> = { keys: keys.map((k) => String(k.id)), key_: keys.map((k) => String(k.id)), webhooks: [String(sub.id)], wh_: [String(sub.id)], dlv_: [String(delivery.id)] };
    const ops = operationsOf(doc);
    expect(ops.length).to.be.greaterThan(20);
    // A session by its place in `cookies` (a sign-out replaces it), and an Origin: mostly the service's own.
    const credentials = fc
      .record({
        slot: fc.oneof({ weight: 12, arbitrary: fc.nat({ max: cookies.length - 1 }) }, { weight: 1, arbitrary: fc.constant(-1) }),
        origin: fc.oneof({ weight: 10, arbitrary: fc.constant(app.url) }, { weight: 1, arbitrary: fc.constantFrom('', 'https://evil.example', 'null', `${app.url}.evil.example`) }),
      })
      .map(({ slot, origin }): Record<string, string> => ({ ...(slot >= 0 ? { 'x-session-slot': String(slot) } : {}), ...(origin ? { origin } : {}) }));
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ops).chain((op) => requestOf(doc, op, '/internal/v1', credentials, ids)), async (req) => {
        const { 'x-session-slot': slot, ...headers } = req.headers;
        const at = slot === undefined ? -1 : Number(slot);
        if (at >= 0) headers.cookie = cookies[at] as string;
        const res = await sent(api, req, headers, statuses);
        // A sign-out ends that session: the next request in its place signs in again.
        if (at >= 0 && req.method === 'DELETE' && req.path.split('?')[0] === '/internal/v1/session' && res.status === 204) {
          const who = people[at]!;
          const ended = cookies[at];
          const fresh = await signIn(app, who.email, who.password, newAddress());
          cookies.forEach((cookie, i) => (cookie === ended ? (cookies[i] = fresh) : undefined));
        }
      }),
      { numRuns: runs, ...SEED },
    );
    printStatuses(statuses);
    for (const status of [200, 400, 401, 403, 404, 422]) expect(statuses.get(status) ?? 0, `answers with ${status}`).to.be.greaterThan(0);
  });
});
