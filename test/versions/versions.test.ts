import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT_DIR } from '../../src/common/config.js';
import type { Versions } from '../../src/versions/index.js';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { internal, person, type Person } from '../helpers/admin.js';
import { waitFor, type TestApp } from '../helpers/app.js';
import { contractOf } from '../helpers/contract.js';
import { startReceiver, verified, type Receiver } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';
import { GADGET_VERSIONS, startVersionedApp, type VersionedApp } from '../helpers/versioned-app.js';

/**
 * API versions (docs/reference.md section 19), over HTTP on this run's backend, with a fixture
 * plugin (test/versions/gadgets) whose shape changed twice: 2027-01-15 renamed two fields,
 * 2027-02-01 turned the text `size` into the integer `size_cm` with code.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const { first: FIRST, renamed: RENAMED, latest: LATEST } = GADGET_VERSIONS;

describe('API versions: pinned keys, converted requests, answers, errors, events and documents', () => {
  let versioned: VersionedApp;
  let app: TestApp;
  let versions: Versions;
  let workspaceId: string;
  /** A key pinned to each version. */
  const tokens: Record<string, string> = {};
  let admin: Person;

  async function call(token: string, route: string, options: { method?: string; json?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: Json; text: string; version: string | null; headers: Headers }> {
    const res = await app.request(route, { token, method: options.method ?? 'GET', ...(options.json !== undefined ? { json: options.json } : {}), headers: options.headers ?? {} });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json, text, version: res.headers.get('api-version'), headers: res.headers };
  }

  const keyAt = (version: string | undefined) => versioned.keyAt(workspaceId, version);

  before(async function () {
    this.timeout(120_000);
    versioned = await startVersionedApp('versions', { TRUST_PROXY: 'true', ...fastWebhooks() });
    ({ app, versions } = versioned);
    admin = await person(app);
    workspaceId = admin.workspaceId;
    for (const version of [FIRST, RENAMED, LATEST]) tokens[version] = (await keyAt(version)).token;
  });
  after(async () => {
    await versioned?.close();
  });

  describe('versions and the Api-Version header', () => {
    it('lists every version with its changes, oldest first, the latest, and the calling key\'s', async () => {
      const { status, body, version } = await call(tokens[FIRST]!, '/v1/versions');
      expect(status).to.equal(200);
      expect(version).to.equal(FIRST);
      expect(body.data.map((v: Json) => v.version)).to.deep.equal([FIRST, RENAMED, LATEST]);
      expect(body.data[0].changes).to.deep.equal([]);
      expect(body.data[1].changes).to.deep.equal([{ description: 'expected_close_date is now close_date; contact_email is now owner_email.', resource: 'gadget', kind: 'field_renamed' }]);
      expect(body.data[2].changes[0]).to.include({ resource: 'gadget', kind: 'type_changed' });
      expect(body.latest).to.equal(LATEST);
      expect(body.key_version).to.equal(FIRST);
      expect((await call(tokens[LATEST]!, '/v1/versions')).body.key_version).to.equal(LATEST);
    });

    it('answers in the header\'s version over the key\'s pin, and names the version on successes and errors alike', async () => {
      expect((await call(tokens[FIRST]!, '/v1/gadgets')).version).to.equal(FIRST);
      expect((await call(tokens[FIRST]!, '/v1/gadgets', { headers: { 'Api-Version': LATEST } })).version).to.equal(LATEST);
      const missing = await call(tokens[RENAMED]!, '/v1/gadgets/gad_nothing');
      expect(missing.status).to.equal(404);
      expect(missing.version).to.equal(RENAMED);
      // Before the key is known: the version asked for, else the latest.
      const anonymous = await app.request('/v1/gadgets');
      expect(anonymous.status).to.equal(401);
      expect(anonymous.headers.get('api-version')).to.equal(LATEST);
      const asked = await app.request('/v1/gadgets', { headers: { 'Api-Version': FIRST } });
      expect(asked.headers.get('api-version')).to.equal(FIRST);
    });

    it('refuses a version the API does not have, or one not written YYYY-MM-DD, with 400 invalid_api_version listing the known ones', async () => {
      for (const sent of ['2027-01-16', '2027-1-15', 'latest', '2026-02-30']) {
        const { status, body } = await call(tokens[LATEST]!, '/v1/gadgets', { headers: { 'Api-Version': sent } });
        expect(status, sent).to.equal(400);
        expect(body.code).to.equal('invalid_api_version');
        expect(body.versions).to.deep.equal([FIRST, RENAMED, LATEST]);
      }
    });
  });

  describe('requests up and answers down', () => {
    let id: string;
    let clientId: string;

    before(async () => {
      clientId = (await call(tokens[LATEST]!, '/v1/clients', { method: 'POST', json: { name: 'Acme' } })).body.id;
    });

    it('takes a create in the oldest shape, answers in it, and stores the latest shape', async () => {
      const made = await call(tokens[FIRST]!, '/v1/gadgets', { method: 'POST', json: { label: 'Lamp', expected_close_date: '2027-03-01', contact_email: 'Ann@Example.com', size: '12 cm', client_id: clientId } });
      expect(made.status, made.text).to.equal(201);
      expect(made.version).to.equal(FIRST);
      expect(made.body).to.include({ label: 'Lamp', expected_close_date: '2027-03-01', contact_email: 'Ann@Example.com', size: '12 cm' });
      expect(made.body).not.to.have.any.keys('close_date', 'owner_email', 'size_cm');
      id = made.body.id;
      const latest = await call(tokens[LATEST]!, `/v1/gadgets/${id}`);
      expect(latest.body).to.include({ close_date: '2027-03-01', owner_email: 'Ann@Example.com', size_cm: 12 });
      expect(latest.body).not.to.have.any.keys('expected_close_date', 'contact_email', 'size');
      const between = await call(tokens[RENAMED]!, `/v1/gadgets/${id}`);
      expect(between.body).to.include({ close_date: '2027-03-01', owner_email: 'Ann@Example.com', size: '12 cm' });
      expect(between.body).not.to.have.any.keys('size_cm', 'expected_close_date');
    });

    it('updates by the older names, converting a field with the change\'s code', async () => {
      const { status, body } = await call(tokens[FIRST]!, `/v1/gadgets/${id}`, { method: 'PATCH', json: { size: '30', expected_close_date: '2027-04-01' } });
      expect(status).to.equal(200);
      expect(body).to.include({ size: '30 cm', expected_close_date: '2027-04-01', version: 2 });
      expect((await call(tokens[LATEST]!, `/v1/gadgets/${id}`)).body).to.include({ size_cm: 30, close_date: '2027-04-01' });
    });

    it('refuses a newer name from an older caller, as an unknown field or parameter', async () => {
      const body = await call(tokens[FIRST]!, `/v1/gadgets/${id}`, { method: 'PATCH', json: { close_date: '2027-05-01' } });
      expect(body.status).to.equal(422);
      expect(body.body.errors[0]).to.include({ pointer: '/close_date' });
      expect(body.body.errors[0].message).to.contain('expected_close_date');
      const query = await call(tokens[FIRST]!, '/v1/gadgets?close_date[lt]=2028-01-01');
      expect(query.status).to.equal(400);
      expect(query.body.errors[0].parameter).to.equal('close_date[lt]');
      // The latest caller is refused the older name alike.
      expect((await call(tokens[LATEST]!, `/v1/gadgets/${id}`, { method: 'PATCH', json: { expected_close_date: '2027-05-01' } })).status).to.equal(422);
    });

    it('says errors by the older names: a hook\'s pointer, and a value the change\'s code could not convert', async () => {
      const hook = await call(tokens[FIRST]!, `/v1/gadgets/${id}`, { method: 'PATCH', json: { expected_close_date: '2000-01-01' } });
      expect(hook.status).to.equal(422);
      expect(hook.body.errors).to.deep.equal([{ pointer: '/expected_close_date', message: 'is before the gadget existed' }]);
      expect(hook.body.detail).to.contain('/expected_close_date').and.not.contain('/close_date');
      expect(hook.version).to.equal(FIRST);
      const latest = await call(tokens[LATEST]!, `/v1/gadgets/${id}`, { method: 'PATCH', json: { close_date: '2000-01-01' } });
      expect(latest.body.errors).to.deep.equal([{ pointer: '/close_date', message: 'is before the gadget existed' }]);
      const size = await call(tokens[FIRST]!, '/v1/gadgets', { method: 'POST', json: { label: 'Huge', size: 'huge' } });
      expect(size.status).to.equal(422);
      expect(size.body.errors.map((e: Json) => e.pointer)).to.deep.equal(['/size']);
      // Nothing was written by the refused create.
      const listed = await call(tokens[LATEST]!, '/v1/gadgets?q=Huge');
      expect(listed.body.data).to.deep.equal([]);
    });

    it('filters and sorts a list by the older names, and walks its pages with their cursor', async () => {
      for (const [label, day] of [['B', '2027-06-02'], ['C', '2027-06-03'], ['D', '2027-06-04']] as const) {
        expect((await call(tokens[LATEST]!, '/v1/gadgets', { method: 'POST', json: { label, close_date: day, size_cm: 5 } })).status).to.equal(201);
      }
      const first = await call(tokens[FIRST]!, '/v1/gadgets?expected_close_date[gte]=2027-06-01&sort=-expected_close_date&limit=2');
      expect(first.status, first.text).to.equal(200);
      expect(first.body.data.map((g: Json) => g.label)).to.deep.equal(['D', 'C']);
      expect(first.body.data[0]).to.include({ expected_close_date: '2027-06-04', size: '5 cm' });
      const next = await call(tokens[FIRST]!, `/v1/gadgets?expected_close_date[gte]=2027-06-01&sort=-expected_close_date&limit=2&cursor=${first.body.next_cursor}`);
      expect(next.body.data.map((g: Json) => g.label)).to.deep.equal(['B']);
      expect(next.body.has_more).to.equal(false);
      const among = await call(tokens[FIRST]!, '/v1/gadgets?contact_email[in]=ann@example.com');
      expect(among.status, among.text).to.equal(200);
      expect(among.body.data.map((g: Json) => g.contact_email)).to.deep.equal(['Ann@Example.com']);
      // A field only the older shape had is not filtered on: no conversion up is known for it.
      expect((await call(tokens[FIRST]!, '/v1/gadgets?size[in]=5')).status).to.equal(400);
    });

    it('converts batch bodies and answers, with errors pointing into the batch by the older names', async () => {
      const refused = await call(tokens[FIRST]!, '/v1/gadgets/batch', { method: 'POST', json: { data: [{ label: 'E', size: '5' }, { label: 'F', size: 'x' }] } });
      expect(refused.status).to.equal(422);
      expect(refused.body.errors.map((e: Json) => e.pointer)).to.deep.equal(['/data/1/size']);
      const made = await call(tokens[FIRST]!, '/v1/gadgets/batch', { method: 'POST', json: { data: [{ label: 'E', size: '5' }, { label: 'F', expected_close_date: '2027-07-01' }] } });
      expect(made.status).to.equal(201);
      expect(made.body.data.map((g: Json) => [g.size, g.expected_close_date])).to.deep.equal([['5 cm', null], [null, '2027-07-01']]);
    });

    it('takes an action\'s body by the older names and answers its object in the older shape', async () => {
      const closed = await call(tokens[FIRST]!, `/v1/gadgets/${id}/close`, { method: 'POST', json: { expected_close_date: '2027-08-01' } });
      expect(closed.status, closed.text).to.equal(200);
      expect(closed.body).to.include({ status: 'closed', expected_close_date: '2027-08-01', size: '30 cm' });
      expect((await call(tokens[LATEST]!, `/v1/gadgets/${id}`)).body.close_date).to.equal('2027-08-01');
    });

    it('converts the object and each object it expands', async () => {
      const { body } = await call(tokens[FIRST]!, `/v1/gadgets/${id}?expand=client`);
      expect(body).to.include({ client_id: clientId, size: '30 cm' });
      expect(body.client).to.include({ id: clientId, name: 'Acme' });
      const page = await call(tokens[FIRST]!, '/v1/gadgets?expand=client&limit=200');
      const listed = page.body.data.find((g: Json) => g.id === id);
      expect(listed).to.include({ size: '30 cm' }).and.not.have.any.keys('size_cm');
      expect(listed.client.name).to.equal('Acme');
    });

    it('replays an Idempotency-Key with the answer first sent, in the version it was sent in', async () => {
      const headers = { 'Idempotency-Key': `versions-${Date.now()}` };
      const first = await call(tokens[FIRST]!, '/v1/gadgets', { method: 'POST', json: { label: 'Once', size: '7' }, headers });
      expect(first.status).to.equal(201);
      // The same request in the latest shape, at the latest version: the same body once converted.
      const again = await call(tokens[FIRST]!, '/v1/gadgets', { method: 'POST', json: { label: 'Once', size_cm: 7 }, headers: { ...headers, 'Api-Version': LATEST } });
      expect(again.status).to.equal(201);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.text).to.equal(first.text);
      expect(again.body.size).to.equal('7 cm');
    });
  });

  describe('keys pinned', () => {
    it('makes a key at the latest version by default, or at the one asked for; refuses one the API lacks', async () => {
      const made = await internal(app, '/keys', { method: 'POST', cookie: admin.cookie, json: { name: 'pinned', scopes: ['read:gadgets'] } });
      expect(made.status).to.equal(201);
      expect(((await made.json()) as Json).api_version).to.equal(LATEST);
      const old = await internal(app, '/keys', { method: 'POST', cookie: admin.cookie, json: { name: 'old', scopes: ['read:gadgets'], api_version: FIRST } });
      expect(((await old.json()) as Json).api_version).to.equal(FIRST);
      const bad = await internal(app, '/keys', { method: 'POST', cookie: admin.cookie, json: { name: 'bad', scopes: ['read:gadgets'], api_version: '2027-01-16' } });
      expect(bad.status).to.equal(422);
      expect(((await bad.json()) as Json).errors[0].pointer).to.equal('/api_version');
    });

    it('moves a pin with PATCH, audited as key.version_changed, and keeps it when the key is rolled', async () => {
      const key = await keyAt(FIRST);
      const moved = await internal(app, `/keys/${key.id}`, { method: 'PATCH', cookie: admin.cookie, json: { api_version: RENAMED } });
      expect(moved.status).to.equal(200);
      expect(((await moved.json()) as Json).api_version).to.equal(RENAMED);
      await waitFor(async () => (await call(key.token, '/v1/versions')).body.key_version === RENAMED, 5000, 'the new pin');
      const audit = (await (await internal(app, '/audit-log?limit=10', { cookie: admin.cookie })).json()) as Json;
      const entry = audit.data.find((e: Json) => e.action === 'key.version_changed' && e.target.id === key.id);
      expect(entry.details.api_version).to.deep.equal({ from: FIRST, to: RENAMED });
      const refused = await internal(app, `/keys/${key.id}`, { method: 'PATCH', cookie: admin.cookie, json: { api_version: 'soon' } });
      expect(refused.status).to.equal(422);
      const rolled = await internal(app, `/keys/${key.id}/roll`, { method: 'POST', cookie: admin.cookie, json: {} });
      expect(rolled.status).to.equal(201);
      const roll = (await rolled.json()) as Json;
      expect(roll.api_version).to.equal(RENAMED);
      expect((await call(roll.token, '/v1/versions')).body.key_version).to.equal(RENAMED);
    });
  });

  describe('events and webhooks', () => {
    let receiver: Receiver;
    let worker: Worker;

    before(async () => {
      receiver = await startReceiver();
      worker = startWorker(app.deps, { render: (event, version) => versions.eventDown(event, version) });
    });
    after(async () => {
      await worker?.stop();
      await receiver?.close();
    });

    async function subscribe(token: string, hook: string, json: Json = {}): Promise<Json> {
      const made = await call(token, '/v1/webhooks', { method: 'POST', json: { url: `${receiver.url}/${hook}`, events: ['gadget.*'], ...json } });
      expect(made.status, made.text).to.equal(201);
      receiver.secrets.set(`/${hook}`, [made.body.secret]);
      return made.body;
    }

    it('renders each subscription\'s deliveries in its version, signed as rendered, and the event log in the caller\'s', async () => {
      const old = await subscribe(tokens[FIRST]!, 'old');
      expect(old.api_version).to.equal(FIRST);
      const latest = await subscribe(tokens[LATEST]!, 'latest');
      expect(latest.api_version).to.equal(LATEST);
      const chosen = await subscribe(tokens[LATEST]!, 'renamed', { api_version: FIRST });
      expect(chosen.api_version).to.equal(FIRST);
      const patched = await call(tokens[LATEST]!, `/v1/webhooks/${chosen.id}`, { method: 'PATCH', json: { api_version: RENAMED } });
      expect(patched.body.api_version).to.equal(RENAMED);
      expect((await call(tokens[LATEST]!, `/v1/webhooks/${chosen.id}`, { method: 'PATCH', json: { api_version: '2030-01-01' } })).status).to.equal(422);

      const made = await call(tokens[LATEST]!, '/v1/gadgets', { method: 'POST', json: { label: 'Hooked', close_date: '2027-09-01', size_cm: 3 } });
      await call(tokens[LATEST]!, `/v1/gadgets/${made.body.id}`, { method: 'PATCH', json: { size_cm: 4 } });
      const updated = (hook: string) => receiver.waitFor(1, (r) => r.path === `/${hook}` && r.body.includes('gadget.updated'));
      const [atOld] = await updated('old');
      const [atLatest] = await updated('latest');
      const [atRenamed] = await updated('renamed');
      expect(receiver.rejected).to.deep.equal([]);
      const oldEvent = verified(old.secret, atOld!);
      expect(oldEvent.data.object).to.include({ expected_close_date: '2027-09-01', size: '4 cm' }).and.not.have.any.keys('close_date', 'size_cm');
      expect(oldEvent.data.previous).to.deep.equal({ size: '3 cm' });
      const latestEvent = verified(latest.secret, atLatest!);
      expect(latestEvent.data.object).to.include({ close_date: '2027-09-01', size_cm: 4 });
      expect(latestEvent.data.previous).to.deep.equal({ size_cm: 3 });
      expect(verified(chosen.secret, atRenamed!).data.object).to.include({ close_date: '2027-09-01', size: '4 cm' });
      // Each is what the document of its version describes under webhooks, and not what another's does.
      (await contractOf(app.url, `/v1/openapi.json?version=${FIRST}`)).checkDelivery(atOld!.headers, atOld!.body);
      (await contractOf(app.url, `/v1/openapi.json?version=${LATEST}`)).checkDelivery(atLatest!.headers, atLatest!.body);
      let mismatch: unknown;
      try {
        (await contractOf(app.url, `/v1/openapi.json?version=${LATEST}`)).checkDelivery(atOld!.headers, atOld!.body);
      } catch (caught) {
        mismatch = caught;
      }
      expect(String(mismatch)).to.contain('OpenAPI contract');

      // The event log, read at a subscription's version, is the bytes it was sent.
      const logged = await call(tokens[FIRST]!, `/v1/event-log/${oldEvent.id}`);
      expect(logged.text).to.equal(atOld!.body);
      expect((await call(tokens[LATEST]!, `/v1/event-log/${oldEvent.id}`)).text).to.equal(atLatest!.body);
      const page = await call(tokens[FIRST]!, '/v1/event-log?type=gadget.updated&limit=1');
      expect(page.body.data[0].data.previous).to.deep.equal({ size: '3 cm' });
    });
  });

  describe('a document per version', () => {
    it('describes the version asked for, the key\'s, or the latest, and refuses one the API lacks', async () => {
      const at = async (query: string, headers: Record<string, string> = {}) => (await (await app.request(`/v1/openapi.json${query}`, { headers })).json()) as Json;
      const oldest = await at(`?version=${FIRST}`);
      expect(Object.keys(oldest.components.schemas.Gadget.properties)).to.include.members(['expected_close_date', 'contact_email', 'size']).and.not.include.members(['close_date', 'size_cm']);
      expect(Object.keys(oldest.components.schemas.GadgetCreate.properties)).to.include('expected_close_date');
      const parameters = oldest.paths['/gadgets'].get.parameters.map((p: Json) => p.name);
      expect(parameters).to.include('expected_close_date[lt]').and.not.include('close_date[lt]');
      expect(Object.keys((await at('')).components.schemas.Gadget.properties)).to.include.members(['close_date', 'size_cm']);
      expect(Object.keys((await at('', { authorization: `Bearer ${tokens[RENAMED]}` })).components.schemas.Gadget.properties)).to.include.members(['close_date', 'size']);
      const refused = await app.request('/v1/openapi.json?version=2030-01-01');
      expect(refused.status).to.equal(400);
      expect(((await refused.json()) as Json).code).to.equal('invalid_api_version');
      // Every answer of this file was held to the document of the version it named (helpers/contract.ts): so are deliveries.
      const contract = await contractOf(app.url, `/v1/openapi.json?version=${FIRST}`);
      expect(contract.doc.paths).to.have.property('/versions');
    });

    it("gives a client generated from an older version's document the types of that version's answers", async function () {
      this.timeout(120_000);
      const made = await call(tokens[FIRST]!, '/v1/gadgets', { method: 'POST', json: { label: 'Typed', expected_close_date: '2027-10-01', size: '8 cm' } });
      const latest = await call(tokens[LATEST]!, `/v1/gadgets/${made.body.id}`);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-client-'));
      try {
        fs.writeFileSync(path.join(dir, 'openapi.json'), await (await app.request(`/v1/openapi.json?version=${FIRST}`)).text());
        const generate = spawnSync(process.execPath, [path.join(ROOT_DIR, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), 'openapi.json', '--output', 'api.d.ts', '--silent'], { cwd: dir, encoding: 'utf8' });
        expect(generate.status, generate.stderr).to.equal(0);
        // The answer recorded at 2026-11-21 is a Gadget of its client; the same object at the latest version is not.
        fs.writeFileSync(
          path.join(dir, 'check.ts'),
          [
            "import type { components } from './api';",
            "type Gadget = components['schemas']['Gadget'];",
            `export const answer: Gadget = ${made.text};`,
            '// @ts-expect-error: the latest shape is not the 2026-11-21 one',
            `export const latest: Gadget = ${latest.text};`,
            '',
          ].join('\n'),
        );
        const compiled = spawnSync(process.execPath, [path.join(ROOT_DIR, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '--strict', '--target', 'es2022', '--module', 'esnext', '--moduleResolution', 'bundler', 'check.ts'], { cwd: dir, encoding: 'utf8' });
        expect(compiled.status, compiled.stdout + compiled.stderr).to.equal(0);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
