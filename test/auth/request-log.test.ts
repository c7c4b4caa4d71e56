import { expect } from 'chai';
import type { Knex } from 'knex';
import { listRequests, RequestLog, sweepRequestLog } from '../../src/admin/request-log.js';
import { dialectOf } from '../../src/db/dialect.js';
import { dialectFor } from '../../src/db/dialects/index.js';
const indexNames = (db: Knex, table: string) => dialectFor(db).indexNames(db, table);
import { backend, migrationsDatabase } from '../helpers/backend.js';
import { startCommitCutter } from '../helpers/db-proxy.js';
import { internal, person, type Person } from '../helpers/admin.js';
import { manualClock, startApp, waitFor, type TestApp } from '../helpers/app.js';
import { failEventInserts } from '../helpers/faults.js';
import { problem } from '../helpers/problem.js';

interface Entry {
  at: string;
  method: string;
  route: string;
  path: string;
  status: number;
  error_code: string | null;
  duration_ms: number;
  request_id: string;
  ip: string;
}
interface Page {
  data: Entry[];
  has_more: boolean;
  next_cursor: string | null;
}
interface Window {
  since: string;
  errors: number;
  by: Array<{ status: number; error_code: string | null; count: number }>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function newKey(app: TestApp, who: Person, json: Record<string, unknown> = {}): Promise<{ id: string; token: string }> {
  const res = await internal(app, '/keys', { method: 'POST', json: { name: 'logged', scopes: ['read:deals', 'write:deals'], ...json }, cookie: who.cookie });
  expect(res.status, await res.clone().text()).to.equal(201);
  return (await res.json()) as { id: string; token: string };
}

async function page(app: TestApp, who: Person, keyId: string, query = ''): Promise<Page> {
  const res = await internal(app, `/keys/${keyId}/requests${query}`, { cookie: who.cookie });
  expect(res.status, await res.clone().text()).to.equal(200);
  return (await res.json()) as Page;
}

/** The key's log once it holds `count` requests (each server writes its log about a second after the answers). */
async function logged(app: TestApp, who: Person, keyId: string, count: number): Promise<Entry[]> {
  let entries: Entry[] = [];
  await waitFor(async () => (entries = (await page(app, who, keyId, '?limit=100')).data).length >= count, 10_000, `${count} requests logged`);
  expect(entries).to.have.length(count);
  return entries;
}

/** docs/reference.md section 15: every request made with a key is in its log. */
describe("a key's request log (GET /internal/v1/keys/{id}/requests)", () => {
  let app: TestApp;
  let alice: Person;

  before(async () => {
    app = await startApp({ env: { TRUST_PROXY: 'true' } });
    alice = await person(app);
  });
  after(() => app.close());

  const call = (token: string, path: string, init: { method?: string; json?: unknown; ip?: string; requestId?: string } = {}) =>
    app.request(path, {
      token,
      ...(init.method ? { method: init.method } : {}),
      ...(init.json !== undefined ? { json: init.json } : {}),
      headers: { 'x-forwarded-for': init.ip ?? '203.0.113.9', ...(init.requestId ? { 'x-request-id': init.requestId } : {}) },
    });

  it('records each request: time, method, route and path, status, error code, duration, request id and client address, newest first', async () => {
    const key = await newKey(app, alice);
    const started = Date.now();
    expect((await call(key.token, '/v1/deals?limit=2', { requestId: 'trace-one' })).status).to.equal(200);
    await problem(await call(key.token, '/v1/deals/deal_nothere', { ip: '2001:db8::7' }), 404, 'not_found');
    await problem(await call(key.token, '/v1/deals', { method: 'POST', json: { title: 42 } }), 422, 'validation_failed');
    const unmatched = await call(key.token, '/v1/nowhere');
    expect(unmatched.status).to.equal(404);
    const finished = Date.now();

    const entries = await logged(app, alice, key.id, 4);
    expect(entries.map((e) => [e.method, e.route, e.path, e.status, e.error_code])).to.deep.equal([
      ['GET', 'unmatched', '/v1/nowhere', 404, 'not_found'],
      ['POST', '/v1/deals', '/v1/deals', 422, 'validation_failed'],
      ['GET', '/v1/deals/{id}', '/v1/deals/deal_nothere', 404, 'not_found'],
      ['GET', '/v1/deals', '/v1/deals', 200, null],
    ]);
    expect(entries[3]!.request_id).to.equal('trace-one');
    expect(entries[0]!.request_id).to.equal(unmatched.headers.get('x-request-id'));
    expect(entries.map((e) => e.ip)).to.deep.equal(['203.0.113.9', '203.0.113.9', '2001:db8::7', '203.0.113.9']);
    for (const e of entries) {
      expect(Date.parse(e.at)).to.be.within(started - 1, finished + 1);
      expect(e.duration_ms).to.be.a('number').and.greaterThan(0).and.lessThan(finished - started + 1);
    }
    // Newest first: the times never go up down the page.
    for (let i = 1; i < entries.length; i += 1) expect(Date.parse(entries[i - 1]!.at)).to.be.at.least(Date.parse(entries[i]!.at));
  });

  it('logs the refusals of a known key (expired, or from an address its allowlist lacks) but no unknown token', async () => {
    const fenced = await newKey(app, alice, { allowed_ips: ['198.51.100.0/24'] });
    const expired = await newKey(app, alice, { expires_in_days: 1 });
    // Set in the database before the key is first used: nothing cached.
    await app.deps.db('api_keys').where({ id: expired.id }).update({ expires_at: Date.now() - 1000 });
    await problem(await call(fenced.token, '/v1/deals', { ip: '203.0.113.50' }), 403, 'ip_not_allowed');
    expect((await call(fenced.token, '/v1/deals', { ip: '198.51.100.7' })).status).to.equal(200);
    await problem(await call(expired.token, '/v1/deals'), 401, 'key_expired');

    const fencedLog = await logged(app, alice, fenced.id, 2);
    expect(fencedLog.map((e) => [e.status, e.error_code, e.ip])).to.deep.equal([
      [200, null, '198.51.100.7'],
      [403, 'ip_not_allowed', '203.0.113.50'],
    ]);
    const expiredLog = await logged(app, alice, expired.id, 1);
    expect([expiredLog[0]!.status, expiredLog[0]!.error_code]).to.deep.equal([401, 'key_expired']);

    // A token that is no key's (here: its checksum fails) is nobody's to log.
    const rows = async () => Number(((await app.deps.db('key_requests').count({ n: '*' })) as Array<{ n: number | string }>)[0]!.n);
    const before = await rows();
    await problem(await call(`${expired.token.slice(0, -8)}AAAAAAAA`, '/v1/deals'), 401, 'invalid_token');
    // A key's request after it, once logged, is the signal: the log is written in the order of the answers.
    const witness = await newKey(app, alice);
    expect((await call(witness.token, '/v1/deals')).status).to.equal(200);
    await logged(app, alice, witness.id, 1);
    expect(await rows()).to.equal(before + 1);
  });

  it('filters by class of status, by status code, and by time (since included, until excluded)', async () => {
    const key = await newKey(app, alice);
    const unfail = await failEventInserts(app.deps.db, alice.workspaceId);
    try {
      await problem(await call(key.token, '/v1/deals', { method: 'POST', json: { title: 'Refused by the database' } }), 500, 'internal_error');
    } finally {
      await unfail();
    }
    await problem(await call(key.token, '/v1/deals/deal_nothere'), 404, 'not_found');
    await problem(await call(key.token, '/v1/deals?limit=0'), 400, 'invalid_parameter');
    expect((await call(key.token, '/v1/deals')).status).to.equal(200);
    const all = await logged(app, alice, key.id, 4);
    const statuses = async (query: string) => (await page(app, alice, key.id, query)).data.map((e) => e.status);
    expect(await statuses('?status=2xx')).to.deep.equal([200]);
    expect(await statuses('?status=4xx')).to.deep.equal([400, 404]);
    expect(await statuses('?status=5xx')).to.deep.equal([500]);
    expect(await statuses('?status=404')).to.deep.equal([404]);
    expect(await statuses('?status=401')).to.deep.equal([]);
    expect((await page(app, alice, key.id, '?status=5xx')).data[0]!.error_code).to.equal('internal_error');
    // all is newest first: [200, 400, 404, 500].
    const at = all.map((e) => e.at);
    expect(await statuses(`?since=${encodeURIComponent(at[1]!)}`)).to.deep.equal(all.filter((e) => e.at >= at[1]!).map((e) => e.status));
    expect(await statuses(`?until=${encodeURIComponent(at[1]!)}`)).to.deep.equal(all.filter((e) => e.at < at[1]!).map((e) => e.status));
    expect(await statuses(`?since=${encodeURIComponent(at[3]!)}&until=${encodeURIComponent(new Date(Date.parse(at[0]!) + 1).toISOString())}&status=4xx`)).to.deep.equal([400, 404]);
    // The same instants written with an offset of hours alone (+02), which Date.parse cannot read (it matched nothing).
    const plusTwo = (iso: string) => new Date(Date.parse(iso) + 2 * 3_600_000).toISOString().replace(/Z$/, '+02');
    expect(await statuses(`?since=${encodeURIComponent(plusTwo(at[1]!))}`)).to.deep.equal(all.filter((e) => e.at >= at[1]!).map((e) => e.status));
    expect(await statuses(`?until=${encodeURIComponent(plusTwo(at[1]!))}`)).to.deep.equal(all.filter((e) => e.at < at[1]!).map((e) => e.status));
  });

  it('walks every request exactly once by cursor, however many arrive meanwhile', async () => {
    const key = await newKey(app, alice);
    for (let i = 0; i < 7; i += 1) expect((await call(key.token, `/v1/deals?limit=${i + 1}`)).status).to.equal(200);
    const all = await logged(app, alice, key.id, 7);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const p: Page = await page(app, alice, key.id, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...p.data.map((e) => e.path + String(e.request_id)));
      cursor = p.next_cursor;
      pages += 1;
      // Requests made while walking come before the first page: never within the walk.
      if (pages === 1) await call(key.token, '/v1/deals?limit=50');
    } while (cursor);
    expect(pages).to.equal(3);
    expect(seen).to.deep.equal(all.map((e) => e.path + e.request_id));
    const now = await logged(app, alice, key.id, 8);
    expect(now.slice(1)).to.deep.equal(all);
  });

  it('refuses bad filters with 400 naming them, and a cursor of another list', async () => {
    const key = await newKey(app, alice);
    for (const [query, parameter] of [
      ['?status=6xx', 'status'],
      ['?status=40', 'status'],
      ['?status=4XX', 'status'],
      ['?since=yesterday', 'since'],
      ['?until=2026-13-01T00:00:00Z', 'until'],
      ['?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z', 'since'],
      ['?limit=0', 'limit'],
      ['?colour=red', 'colour'],
    ] as const) {
      const body = await problem(await internal(app, `/keys/${key.id}/requests${query}`, { cookie: alice.cookie }), 400, 'invalid_parameter');
      expect(body.errors?.map((e) => (e as { parameter?: string }).parameter), query).to.include(parameter);
    }
    const keys = (await (await internal(app, '/keys?limit=1', { cookie: alice.cookie })).json()) as Page;
    expect(keys.next_cursor).to.be.a('string');
    await problem(await internal(app, `/keys/${key.id}/requests?cursor=${keys.next_cursor}`, { cookie: alice.cookie }), 400, 'invalid_cursor');
  });

  it("is the workspace's own: another workspace's key is 404, a viewer may read, and signed out is 401", async () => {
    const key = await newKey(app, alice);
    expect((await call(key.token, '/v1/deals')).status).to.equal(200);
    await logged(app, alice, key.id, 1);
    const mallory = await person(app);
    await problem(await internal(app, `/keys/${key.id}/requests`, { cookie: mallory.cookie }), 404, 'not_found');
    await problem(await internal(app, `/keys/${key.id}/requests/summary`, { cookie: mallory.cookie }), 404, 'not_found');
    await problem(await internal(app, `/keys/key_nothere/requests`, { cookie: alice.cookie }), 404, 'not_found');
    const viewer = await person(app, { role: 'viewer', workspaceId: alice.workspaceId });
    expect((await page(app, viewer, key.id)).data).to.have.length(1);
    await problem(await internal(app, `/keys/${key.id}/requests`), 401, 'not_signed_in');
  });

  it('sums the errors by status and code over 24 hours and 7 days', async () => {
    const key = await newKey(app, alice);
    await problem(await call(key.token, '/v1/deals/deal_a'), 404, 'not_found');
    await problem(await call(key.token, '/v1/deals/deal_b'), 404, 'not_found');
    await problem(await call(key.token, '/v1/deals?limit=0'), 400, 'invalid_parameter');
    expect((await call(key.token, '/v1/deals')).status).to.equal(200);
    await logged(app, alice, key.id, 4);
    const res = await internal(app, `/keys/${key.id}/requests/summary`, { cookie: alice.cookie });
    expect(res.status).to.equal(200);
    const summary = (await res.json()) as { last_24_hours: Window; last_7_days: Window };
    const by = [
      { status: 404, error_code: 'not_found', count: 2 },
      { status: 400, error_code: 'invalid_parameter', count: 1 },
    ];
    expect(summary.last_24_hours.errors).to.equal(3);
    expect(summary.last_24_hours.by).to.deep.equal(by);
    expect(summary.last_7_days.by).to.deep.equal(by);
    const hour = Math.floor(Date.now() / HOUR) * HOUR;
    expect(Date.parse(summary.last_24_hours.since)).to.be.oneOf([hour - 23 * HOUR, hour - 22 * HOUR]);
  });
});

describe('the request log over days: the summary windows and retention', () => {
  let app: TestApp;
  const clock = manualClock(Date.UTC(2026, 10, 2, 10, 30, 0));

  before(async () => {
    app = await startApp({ clock, env: { RETENTION_DAYS: '5' } });
  });
  after(() => app.close());

  it('counts an error of 3 days ago in the 7 days only, and sweeps entries past RETENTION_DAYS', async () => {
    const { workspaceId, keyId, token } = await app.workspaceWithKey({ scopes: ['read:deals'] });
    await problem(await app.request('/v1/deals/deal_old', { token }), 404, 'not_found');
    clock.advance(3 * 24 * HOUR);
    await problem(await app.request('/v1/deals?limit=0', { token }), 400, 'invalid_parameter');
    expect((await app.request('/v1/deals', { token })).status).to.equal(200);
    const alice = await person(app, { workspaceId });
    await logged(app, alice, keyId, 3);
    const summary = (await (await internal(app, `/keys/${keyId}/requests/summary`, { cookie: alice.cookie })).json()) as { last_24_hours: Window; last_7_days: Window };
    expect(summary.last_24_hours).to.deep.equal({ since: new Date(Date.UTC(2026, 10, 4, 11)).toISOString(), errors: 1, by: [{ status: 400, error_code: 'invalid_parameter', count: 1 }] });
    expect(summary.last_7_days.errors).to.equal(2);
    expect(summary.last_7_days.by.map((b) => b.error_code)).to.have.members(['not_found', 'invalid_parameter']);

    // Three more days: the first request is 6 days old, past the 5 kept.
    clock.advance(3 * 24 * HOUR);
    expect(await sweepRequestLog(app.deps.db, clock.now(), 5 * 24 * HOUR)).to.be.at.least(1);
    const cookie = (await person(app, { workspaceId })).cookie;
    const left = (await (await internal(app, `/keys/${keyId}/requests`, { cookie })).json()) as Page;
    expect(left.data.map((e) => e.status)).to.deep.equal([200, 400]);
    const after = (await (await internal(app, `/keys/${keyId}/requests/summary`, { cookie })).json()) as { last_7_days: Window };
    expect(after.last_7_days.by).to.deep.equal([{ status: 400, error_code: 'invalid_parameter', count: 1 }]);
  });
});

describe('the request log, written and swept in bulk (admin/request-log.ts)', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('writes thousands of entries in one flush, and sweeps a key past the window in batches, ties at the edge included', async () => {
    const { keyId } = await app.workspaceWithKey({ scopes: ['read:deals'] });
    const other = await app.workspaceWithKey({ scopes: ['read:deals'] });
    const log = new RequestLog(app.deps.db, app.deps.log);
    const now = Date.UTC(2026, 10, 20, 12);
    const entry = (key: string, at: number, status = 200) => ({ keyId: key, at, method: 'GET', route: '/v1/deals', path: '/v1/deals', status, errorCode: status >= 400 ? 'not_found' : null, durationUs: 1500, requestId: 'bulk', ip: '127.0.0.1' });
    // 2,500 entries past the window, 10 of them in the very millisecond of the 1,000th; 7 within it; and another key's 1,200 past it.
    for (let i = 0; i < 2500; i += 1) log.record(entry(keyId, now - 40 * DAY + (i < 1010 && i >= 990 ? 995 : i), i % 10 === 0 ? 404 : 200));
    for (let i = 0; i < 7; i += 1) log.record(entry(keyId, now - i * HOUR));
    for (let i = 0; i < 1200; i += 1) log.record(entry(other.keyId, now - 31 * DAY + i));
    await log.stop();
    const count = async (key: string) => Number(((await app.deps.db('key_requests').where({ key_id: key }).count({ n: '*' })) as Array<{ n: number | string }>)[0]!.n);
    expect(await count(keyId)).to.equal(2507);
    const errors = (await app.deps.db('key_request_errors').where({ key_id: keyId }).sum({ n: 'requests' })) as Array<{ n: number | string }>;
    expect(Number(errors[0]!.n)).to.equal(250);
    expect(await sweepRequestLog(app.deps.db, now, 30 * DAY)).to.be.at.least(3700);
    expect(await count(keyId)).to.equal(7);
    expect(await count(other.keyId)).to.equal(0);
    expect(await app.deps.db('key_request_errors').where({ key_id: keyId })).to.have.length(0);
  });

  it("finds a key's few errors among many successes by the index of its other answers, its successes by the log's own key", async () => {
    const { keyId, workspaceId } = await app.workspaceWithKey({ scopes: ['read:deals'] });
    const log = new RequestLog(app.deps.db, app.deps.log);
    const now = Date.UTC(2026, 10, 27, 12);
    for (let i = 0; i < 3000; i += 1) {
      const status = i % 300 === 7 ? 404 : i === 2990 ? 503 : 200;
      log.record({ keyId, at: now + i, method: 'GET', route: '/v1/deals', path: '/v1/deals', status, errorCode: status === 200 ? null : 'not_found', durationUs: 900, requestId: `r${i}`, ip: '127.0.0.1' });
    }
    await log.stop();
    const db = app.deps.db;
    const statuses = async (status: string) => (await listRequests(db, workspaceId, keyId, { limit: 50, status })).data.map((r) => r.status);
    expect(await statuses('4xx')).to.deep.equal(Array.from({ length: 10 }, () => 404));
    expect(await statuses('404')).to.have.length(10);
    expect(await statuses('5xx')).to.deep.equal([503]);
    expect(await statuses('2xx')).to.deep.equal(Array.from({ length: 50 }, () => 200));
    const dialect = dialectOf(db);
    // The errors' listing as the service sends it, planned by the database: SQLite and PostgreSQL by their partial index.
    const sent: Knex.Sql[] = [];
    const keep = (query: Knex.Sql) => sent.push(query);
    db.on('query', keep);
    await statuses('5xx');
    db.off('query', keep);
    const listing = sent.find((query) => query.sql.includes('key_requests'))!;
    if (dialect === 'sqlite') {
      const plan = (await db.raw(`EXPLAIN QUERY PLAN ${listing.sql}`, listing.bindings as Knex.RawBinding[])) as Array<{ detail: string }>;
      expect(plan.map((p) => p.detail).join('\n'), listing.sql).to.include('key_requests_key_errors');
    }
    const indexes = dialect === 'mysql' ? [] : dialect === 'sqlite' ? await db.raw("SELECT sql FROM sqlite_master WHERE name = 'key_requests_key_errors'") : (await db.raw("SELECT indexdef AS sql FROM pg_indexes WHERE indexname = 'key_requests_key_errors'")).rows;
    if (dialect !== 'mysql') expect((indexes as Array<{ sql: string }>)[0]?.sql).to.match(/WHERE \(?status_class <> 2\)?/);
  });
});

describe("the request log's index of a key's other answers, and its migration", () => {
  const ERRORS = '20261128000100_key_requests_errors_index';
  const storage = migrationsDatabase('logindex');

  it('keeps the answers that are not successes only (SQLite, PostgreSQL), and gives the whole index back on rollback', async () => {
    const { db } = storage;
    const mysql = dialectOf(db) === 'mysql';
    await storage.latest();
    expect([...(await indexNames(db, 'key_requests'))].filter((name) => name.startsWith('key_requests_key_')).sort()).to.deep.equal([mysql ? 'key_requests_key_class_at' : 'key_requests_key_errors']);
    await storage.down(ERRORS);
    expect([...(await indexNames(db, 'key_requests'))].filter((name) => name.startsWith('key_requests_key_'))).to.deep.equal(['key_requests_key_class_at']);
    await storage.latest();
    expect(await indexNames(db, 'key_requests')).to.include(mysql ? 'key_requests_key_class_at' : 'key_requests_key_errors');
  });
});

describe('REQUEST_LOG=false', () => {
  it('logs nothing', async () => {
    const app = await startApp({ env: { REQUEST_LOG: 'false' } });
    const made = await app.workspaceWithKey({ scopes: ['read:deals'] });
    try {
      expect((await app.request('/v1/deals', { token: made.token })).status).to.equal(200);
    } finally {
      await app.close();
    }
    const { keyId } = made;
    // close() writes whatever was logged: nothing.
    const check = await startApp();
    try {
      const rows = await check.deps.db('key_requests').where({ key_id: keyId });
      expect(rows).to.have.length(0);
    } finally {
      await check.close();
    }
  });
});

describe("a key's request log while its database is away", () => {
  it('holds the 503s answered meanwhile, beside the answers before and after, the key\'s cache entry fresh or past its time', async function () {
    if (backend().kind === 'embedded') this.skip();
    const cutter = await startCommitCutter(backend().env.DATABASE_URL!);
    const clock = manualClock(Date.now());
    const app = await startApp({ clock, env: { DATABASE_URL: cutter.url } });
    try {
      const made = await app.workspaceWithKey({ scopes: ['read:deals'] });
      const status = async () => (await app.request('/v1/deals?limit=1', { token: made.token })).status;
      expect(await status()).to.equal(200);
      cutter.refuse = true;
      cutter.dropAll();
      const during: number[] = [];
      // The first with the key still cached (the list fails), the next two once the cache entry is stale (the lookup fails).
      during.push(await status());
      clock.advance(120_000);
      for (let i = 0; i < 2; i++) during.push(await status());
      expect(during).to.deep.equal([503, 503, 503]);
      cutter.refuse = false;
      await waitFor(async () => (await status()) === 200, 15_000, 'the database back');
      await waitFor(async () => Number((await app.deps.db('key_requests').where({ key_id: made.keyId }).count({ n: '*' }).first())?.n) === 5, 10_000, 'every answer logged');
      const rows = (await app.deps.db('key_requests').where({ key_id: made.keyId }).select('status', 'error_code')) as Array<{ status: number; error_code: string | null }>;
      expect(rows.map((r) => `${Number(r.status)} ${r.error_code ?? ''}`).sort()).to.deep.equal(['200 ', '200 ', '503 unavailable', '503 unavailable', '503 unavailable']);
    } finally {
      await app.close();
      await cutter.close();
    }
  });
});
