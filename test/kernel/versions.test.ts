import { expect } from 'chai';
import { createWorkspace } from '../../src/auth/keys.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { expectedVersion, knownVersions, unchanged } from '../../src/kernel/write/checks.js';
import * as versionsMigration from '../../migrations/20261126000100_versions.js';
import { isolatedDatabase } from '../helpers/backend.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

type Json = Record<string, unknown>;

describe('If-Match, read (kernel/write/checks.ts)', () => {
  it('takes a tag, a list of them, *, or bare digits; a weak tag matches nothing; anything else is refused', () => {
    expect(expectedVersion('')).to.equal(undefined);
    expect(expectedVersion('*')).to.deep.equal({ any: true });
    expect(expectedVersion('"3"')).to.deep.equal({ any: false, versions: new Set([3]) });
    expect(expectedVersion(' "3", "5" ,"8"')).to.deep.equal({ any: false, versions: new Set([3, 5, 8]) });
    expect(expectedVersion('3')).to.deep.equal({ any: false, versions: new Set([3]) });
    expect(expectedVersion('W/"3"')).to.deep.equal({ any: false, versions: new Set() });
    expect(expectedVersion('"abc"')).to.deep.equal({ any: false, versions: new Set() });
    for (const bad of ['abc', '"3', '3"', '"3" "4"', 'W/3', '*, "3"']) expect(() => expectedVersion(bad), bad).to.throw(/If-Match must be/);
  });

  it('reads If-None-Match alike, but lets a weak tag match (RFC 9110 compares it weakly)', () => {
    expect(knownVersions('')).to.equal(undefined);
    expect(knownVersions('W/"3", "5"')).to.deep.equal({ any: false, versions: new Set([3, 5]) });
    expect(unchanged(knownVersions('W/"3"'), 3)).to.equal(true);
    expect(unchanged(knownVersions('"4"'), 3)).to.equal(false);
    expect(unchanged(knownVersions('*'), 3)).to.equal(true);
    expect(unchanged(undefined, 3)).to.equal(false);
    expect(() => knownVersions('W/3')).to.throw(/If-None-Match must be/);
  });
});

/** docs/reference.md section 16: every object carries a version; If-Match makes a change conditional on it. */
describe('versions and If-Match, over HTTP', () => {
  let app: TestApp;
  let token: string;

  before(async () => {
    app = await startApp();
    ({ token } = await app.workspaceWithKey({ scopes: ['read:deals', 'write:deals', 'read:clients'] }));
  });
  after(() => app.close());

  const send = (path: string, init: { method?: string; json?: unknown; ifMatch?: string } = {}) =>
    app.request(path, { token, ...(init.method ? { method: init.method } : {}), ...(init.json !== undefined ? { json: init.json } : {}), headers: init.ifMatch !== undefined ? { 'if-match': init.ifMatch } : {} });
  const create = async (title: string) => {
    const res = await send('/v1/deals', { method: 'POST', json: { title } });
    expect(res.status).to.equal(201);
    return (await res.json()) as Json;
  };
  const events = async (objectId: string) => (await app.deps.db('events').where({ object_id: objectId }).orderBy('seq')).map((e: { type: string; payload: string }) => ({ type: e.type, version: (JSON.parse(e.payload) as { data: { object: { version: number } } }).data.object.version }));

  it('starts at 1, adds one per change (not for a PATCH that changes nothing), answers it as the ETag, and carries it in every event', async () => {
    const deal = await create('Versioned');
    expect(deal.version).to.equal(1);
    const got = await send(`/v1/deals/${deal.id}`);
    expect(got.headers.get('etag')).to.equal('"1"');
    expect(((await got.json()) as Json).version).to.equal(1);
    const patched = await send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { title: 'Versioned, twice' } });
    expect(patched.status).to.equal(200);
    expect(patched.headers.get('etag')).to.equal('"2"');
    expect(((await patched.json()) as Json).version).to.equal(2);
    const same = await send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { title: 'Versioned, twice' } });
    expect(((await same.json()) as Json).version).to.equal(2);
    expect((await send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { stage: 'qualified' } })).headers.get('etag')).to.equal('"3"');
    expect((await send(`/v1/deals/${deal.id}`, { method: 'DELETE' })).status).to.equal(204);
    expect(await events(String(deal.id))).to.deep.equal([
      { type: 'deal.created', version: 1 },
      { type: 'deal.updated', version: 2 },
      { type: 'deal.updated', version: 3 },
      { type: 'deal.stage_changed', version: 3 },
      { type: 'deal.deleted', version: 3 },
    ]);
  });

  it('changes only the version If-Match names: 412 version_mismatch with the current version otherwise, and nothing written', async () => {
    const deal = await create('Guarded');
    expect((await send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { title: 'Moved on' } })).status).to.equal(200);
    const stale = await problem(await send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { title: 'Stale write' }, ifMatch: '"1"' }), 412, 'version_mismatch');
    expect(stale.current_version).to.equal(2);
    expect(stale.detail).to.contain('version 2');
    const again = await send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { title: 'Stale write' }, ifMatch: 'W/"2"' });
    expect(again.status).to.equal(412);
    expect(again.headers.get('etag')).to.equal('"2"');
    const now = (await (await send(`/v1/deals/${deal.id}`)).json()) as Json;
    expect(now).to.include({ title: 'Moved on', version: 2 });
    expect(await events(String(deal.id))).to.have.length(2);

    for (const [ifMatch, version] of [['"2"', 3], ['"1", "3"', 4], ['*', 5], ['5', 6]] as const) {
      const res = await send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { title: `At ${version}` }, ifMatch });
      expect(res.status, ifMatch).to.equal(200);
      expect(((await res.json()) as Json).version, ifMatch).to.equal(version);
    }
    const bad = await problem(await send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { title: 'x' }, ifMatch: 'six' }), 400, 'invalid_parameter');
    expect(bad.errors).to.deep.equal([{ parameter: 'If-Match', message: 'must be an entity tag such as "3", a comma-separated list of them, or *' }]);
    // Not "the object's ETag ("3")": this one is at 6.
    expect(bad.detail).to.equal('If-Match must be an entity tag such as "3" (an object\'s ETag, as GET answers it), a comma-separated list of them, or *.');
    await problem(await send('/v1/deals/deal_nothere', { method: 'PATCH', json: { title: 'x' }, ifMatch: '"1"' }), 404, 'not_found');
  });

  it('deletes only the version If-Match names', async () => {
    const deal = await create('Delete me carefully');
    await send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { title: 'Changed' } });
    const refused = await problem(await send(`/v1/deals/${deal.id}`, { method: 'DELETE', ifMatch: '"1"' }), 412, 'version_mismatch');
    expect(refused.current_version).to.equal(2);
    expect((await send(`/v1/deals/${deal.id}`)).status).to.equal(200);
    expect((await send(`/v1/deals/${deal.id}`, { method: 'DELETE', ifMatch: '"2"' })).status).to.equal(204);
    expect((await send(`/v1/deals/${deal.id}`)).status).to.equal(404);
  });

  it('answers a GET whose If-None-Match names the current version 304 with no body, and 200 once it moved on', async () => {
    const deal = await create('Cached');
    const get = (ifNoneMatch: string, query = '') => app.request(`/v1/deals/${deal.id}${query}`, { token, headers: { 'if-none-match': ifNoneMatch } });
    for (const tag of ['"1"', 'W/"1"', '"7", "1"', '*']) {
      const res = await get(tag);
      expect(res.status, tag).to.equal(304);
      expect(res.headers.get('etag'), tag).to.equal('"1"');
      expect(await res.text(), tag).to.equal('');
    }
    expect((await send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { title: 'Cached, changed' } })).status).to.equal(200);
    const moved = await get('"1"');
    expect(moved.status).to.equal(200);
    expect(moved.headers.get('etag')).to.equal('"2"');
    expect(((await moved.json()) as Json).title).to.equal('Cached, changed');
    expect((await get('"2"')).status).to.equal(304);
    // expand adds objects the ETag does not cover: always sent.
    const expanded = await get('"2"', '?expand=client');
    expect(expanded.status).to.equal(200);
    expect((await expanded.json()) as Json).to.include({ client_id: null, client: null });
    const bad = await problem(await get('two'), 400, 'invalid_parameter');
    expect(bad.errors?.[0]?.parameter).to.equal('If-None-Match');
    await problem(await app.request('/v1/deals/deal_nothere', { token, headers: { 'if-none-match': '*' } }), 404, 'not_found');
  });

  it('lets exactly one of concurrent PATCHes with the same If-Match win', async () => {
    const deal = await create('Raced');
    const racers = await Promise.all(Array.from({ length: 8 }, (_, i) => send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { title: `Racer ${i}` }, ifMatch: '"1"' })));
    const statuses = racers.map((r) => r.status).sort();
    expect(statuses).to.deep.equal([200, 412, 412, 412, 412, 412, 412, 412]);
    const winner = (await racers.find((r) => r.status === 200)!.json()) as Json;
    const now = (await (await send(`/v1/deals/${deal.id}`)).json()) as Json;
    expect(now).to.include({ title: winner.title, version: 2 });
    expect((await events(String(deal.id))).filter((e) => e.type === 'deal.updated')).to.deep.equal([{ type: 'deal.updated', version: 2 }]);
  });

  it('gives each object of a batch version 1, and refuses a version sent in a body', async () => {
    const res = await send('/v1/deals/batch', { method: 'POST', json: { data: [{ title: 'One' }, { title: 'Two' }] } });
    expect(res.status).to.equal(201);
    expect(((await res.json()) as { data: Json[] }).data.map((d) => d.version)).to.deep.equal([1, 1]);
    await problem(await send('/v1/deals', { method: 'POST', json: { title: 'Forged', version: 7 } }), 422, 'validation_failed');
    const deal = await create('Not forged');
    await problem(await send(`/v1/deals/${deal.id}`, { method: 'PATCH', json: { version: 9 } }), 422, 'validation_failed');
    expect(((await (await send(`/v1/deals/${deal.id}`)).json()) as Json).version).to.equal(1);
  });

  it('documents version, ETag, If-Match and 412 in the OpenAPI document', async () => {
    const doc = (await (await send('/v1/openapi.json')).json()) as { paths: Record<string, Record<string, { parameters?: Array<{ name: string }>; responses: Record<string, { headers?: Json }> }>>; components: { schemas: Record<string, { required: string[] }> } };
    expect(doc.components.schemas.Deal!.required).to.include('version');
    const item = doc.paths['/deals/{id}']!;
    expect(item.get!.responses['200']!.headers).to.have.property('ETag');
    expect(item.get!.responses['304']!.headers).to.have.property('ETag');
    expect(item.get!.parameters!.map((p) => p.name)).to.include('If-None-Match');
    for (const method of ['patch', 'delete']) {
      expect(item[method]!.parameters!.map((p) => p.name), method).to.include('If-Match');
      expect(item[method]!.responses, method).to.have.property('412');
    }
  });
});

describe('the versions migration', () => {
  it('gives rows stored before it version 1', async () => {
    const storage = await isolatedDatabase('versions');
    const app = await startApp({ env: storage.env });
    try {
      const { db } = app.deps;
      await migrateLatest(db, app.deps.config.migrationsDirs);
      // As a database migrated before this migration: no version column, and the migration not applied.
      await versionsMigration.down(db);
      await db('knex_migrations').where('name', 'like', '20261126000100_versions%').delete();
      expect(await db.schema.hasColumn('deals', 'version')).to.equal(false);
      const ws = await createWorkspace(db, { name: 'old', plan: 'pro' });
      await db('deals').insert({ id: 'deal_0ld', workspace_id: ws.id, title: 'From before', stage: 'lead', created_at: 1, updated_at: 1 });
      expect(await migrateLatest(db, app.deps.config.migrationsDirs)).to.have.length(1);
      expect(await db('deals').where({ id: 'deal_0ld' }).first('version')).to.deep.equal({ version: 1 });
    } finally {
      await app.close();
      await storage.drop();
    }
  });
});
