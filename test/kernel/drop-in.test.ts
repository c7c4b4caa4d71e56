import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig, ROOT_DIR } from '../../src/common/config.js';
import { createDb } from '../../src/db/connect.js';
import { backend, isolatedDatabase } from '../helpers/backend.js';
import { checkedFetcher, contractOf } from '../helpers/contract.js';
import { admin, startServer, type ServerProcess } from '../helpers/processes.js';
import { startReceiver, verified, type Receiver } from '../helpers/receiver.js';
import { besidePlugins } from '../helpers/beside-plugins.js';

const FIXTURES = path.join(ROOT_DIR, 'test/fixtures/drop-in');

/** Every file under src/, recursively. */
function sourceFiles(dir = path.join(ROOT_DIR, 'src')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('dropping in a resource plugin (a notes plugin and its migration, nothing under src/)', () => {
  let folders: ReturnType<typeof besidePlugins>;
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  let env: Record<string, string>;
  let server: ServerProcess;
  let receiver: Receiver;
  let token: string;
  let readOnlyToken: string;
  let api: Awaited<ReturnType<typeof checkedFetcher>>;

  before(async function () {
    this.timeout(60_000);
    folders = besidePlugins('drop-in');
    folders.place(path.join(FIXTURES, 'notes.ts'));
    folders.place(path.join(FIXTURES, '20261201000000_notes.ts'));
    database = await isolatedDatabase('dropin');
    env = { ...database.env, PLUGINS_DIR: folders.plugins, MIGRATIONS_DIR: folders.migrations };
    receiver = await startReceiver();
    server = await startServer({ ...env, WORKER: 'inline', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS: '0.2' });
    const ws = await admin(['workspace', 'create', '--name', 'Drop-in', '--plan', 'pro', '--json'], env);
    expect(ws.code, ws.stderr).to.equal(0);
    const workspace = (JSON.parse(ws.stdout) as { id: string }).id;
    const key = await admin(['key', 'create', '--workspace', workspace, '--name', 'notes', '--scopes', 'read:notes,write:notes,read:clients,write:clients,webhooks:manage', '--json'], env);
    expect(key.code, key.stderr).to.equal(0);
    token = (JSON.parse(key.stdout) as { token: string }).token;
    const reader = await admin(['key', 'create', '--workspace', workspace, '--name', 'reader', '--scopes', 'read:notes', '--json'], env);
    readOnlyToken = (JSON.parse(reader.stdout) as { token: string }).token;
    api = await checkedFetcher(server.url);
    receiver.contract = await contractOf(server.url);
  });
  after(async () => {
    await server?.stop();
    await receiver?.close();
    await database?.drop();
    folders?.remove();
  });

  const call = async (route: string, options: { method?: string; json?: unknown; as?: string } = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${options.as ?? token}` };
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    const res = await api(route, { method: options.method ?? 'GET', headers, ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as Json };
  };

  it('needs no change under src/: the kernel does not know the resource', () => {
    for (const file of sourceFiles()) expect(fs.readFileSync(file, 'utf8'), path.relative(ROOT_DIR, file)).not.to.match(/\bnotes?\b|note_/i);
  });

  it('warns once at boot that it imports the kernel by relative path, naming it and the entry point to use; the shipped plugins import workspace-api/plugin', () => {
    const warnings = server.output().split('\n').filter((line) => line.includes('by relative path'));
    expect(warnings).to.have.length(1);
    const warning = JSON.parse(warnings[0]!) as { level: number; plugin: string; msg: string };
    expect(warning.level).to.equal(40);
    expect(path.basename(warning.plugin)).to.equal('notes.ts');
    expect(warning.msg).to.contain("import from 'workspace-api/plugin' instead");
    for (const file of fs.readdirSync(path.join(ROOT_DIR, 'plugins'))) {
      const source = fs.readFileSync(path.join(ROOT_DIR, 'plugins', file), 'utf8');
      expect(source, file).to.match(/from 'workspace-api\/plugin'/);
      expect(source, file).not.to.match(/src\/kernel/);
    }
  });

  it('adds its scopes to /v1/scopes and its events to /v1/events', async () => {
    const scopes = await call('/v1/scopes');
    expect(scopes.body.data).to.deep.include.members([
      { name: 'read:notes', resource: 'notes', access: 'read', description: 'List and read notes.', granted: true },
      { name: 'write:notes', resource: 'notes', access: 'write', description: 'Create, update and delete notes.', granted: true },
    ]);
    const events = await call('/v1/events');
    expect(events.body.data.filter((e: Json) => e.resource === 'notes').map((e: Json) => e.name)).to.deep.equal(['note.created', 'note.updated', 'note.deleted', 'note.pinned']);
  });

  it('adds its paths, schemas and events to the OpenAPI document', async () => {
    const doc = (await call('/v1/openapi.json')).body;
    expect(Object.keys(doc.paths.notes ?? {})).to.deep.equal([]);
    expect(Object.keys(doc.paths['/notes'])).to.deep.equal(['get', 'post']);
    expect(Object.keys(doc.paths['/notes/{id}'])).to.deep.equal(['get', 'patch', 'delete']);
    expect(doc.paths['/notes'].post.security).to.deep.equal([{ bearerAuth: ['write:notes'] }]);
    expect(doc.components.schemas.Note.properties.pinned).to.deep.equal({ type: 'boolean', default: false, description: 'Pinned notes are shown first.' });
    expect(doc.components.schemas.NoteCreate.required).to.deep.equal(['body']);
    expect(doc.webhooks['note.pinned'].post.requestBody.content['application/json'].schema.anyOf[0].properties.type.const).to.equal('note.pinned');
  });

  it('serves list, get and write routes, with its scopes, its schema and its reference checked', async () => {
    const client = await call('/v1/clients', { method: 'POST', json: { name: 'Acme' } });
    const created = await call('/v1/notes', { method: 'POST', json: { body: 'Call back in January.', client_id: client.body.id } });
    expect(created.status).to.equal(201);
    expect(created.body).to.include({ body: 'Call back in January.', client_id: client.body.id, pinned: false });
    expect(created.body.id).to.match(/^note_[0-9a-z]+$/);
    expect(created.headers.get('location')).to.equal(`/v1/notes/${created.body.id}`);

    expect((await call(`/v1/notes/${created.body.id}`)).body).to.deep.equal(created.body);
    const list = await call(`/v1/notes?client_id=${client.body.id}`);
    expect(list.body.data.map((n: Json) => n.id)).to.deep.equal([created.body.id]);

    const pinned = await call(`/v1/notes/${created.body.id}`, { method: 'PATCH', json: { pinned: true } });
    expect(pinned.status).to.equal(200);
    expect(pinned.body.pinned).to.equal(true);
    // The same value again changes nothing.
    expect((await call(`/v1/notes/${created.body.id}`, { method: 'PATCH', json: { pinned: true } })).body.updated_at).to.equal(pinned.body.updated_at);

    const invalid = await call('/v1/notes', { method: 'POST', json: { body: '', pinned: 'yes', colour: 'red' } });
    expect(invalid.status).to.equal(422);
    expect(invalid.body.errors.map((e: Json) => e.pointer).sort()).to.deep.equal(['/body', '/colour', '/pinned']);
    expect((await call('/v1/notes', { method: 'POST', json: { body: 'x', client_id: 'client_doesnotexist' } })).status).to.equal(422);

    const refused = await call('/v1/notes', { method: 'POST', json: { body: 'Not mine to write.' }, as: readOnlyToken });
    expect(refused.status).to.equal(403);
    expect(refused.headers.get('www-authenticate')).to.include('scope="write:notes"');
    expect((await call('/v1/notes', { as: readOnlyToken })).status).to.equal(200);

    expect((await call(`/v1/notes/${created.body.id}`, { method: 'DELETE' })).status).to.equal(204);
    expect((await call(`/v1/notes/${created.body.id}`)).status).to.equal(404);
  });

  it('searches the text it declares searchable, and filters by the text field it declares filterable, [in] included', async () => {
    const made = [];
    for (const [body, topic] of [
      ['Invoice 42 was paid twice: refund it.', 'billing'],
      ['Refund policy explained on the phone.', 'support'],
      ['Lunch on Friday.', null],
    ] as const) {
      const res = await call('/v1/notes', { method: 'POST', json: { body, topic } });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      made.push(res.body.id as string);
    }
    const ids = async (query: string) => ((await call(`/v1/notes?${query}`)).body.data as Json[]).map((n) => n.id as string).sort();
    expect(await ids('q=refund')).to.deep.equal([made[0], made[1]].sort());
    expect(await ids('q=refund%20pho')).to.deep.equal([made[1]]);
    expect(await ids('topic=billing')).to.deep.equal([made[0]]);
    expect(await ids('topic[in]=billing,support')).to.deep.equal([made[0], made[1]].sort());
    expect(await ids('topic[in]=support&q=refund')).to.deep.equal([made[1]]);
    // A text compares exactly on every backend: not by MySQL's collation, which ignores case, accents and trailing spaces.
    const similar = await call('/v1/notes', { method: 'POST', json: { body: 'Same topic?', topic: 'Bílling ' } });
    expect(similar.status).to.equal(201);
    for (const query of ['topic=Billing', 'topic=billing%20', 'topic[in]=BILLING,Support']) expect(await ids(query), query).to.deep.equal([]);
    expect(await ids('topic=billing')).to.deep.equal([made[0]]);
    expect(await ids('topic=B%C3%ADlling%20')).to.deep.equal([similar.body.id]);
    expect(await ids('topic[in]=B%C3%ADlling%20,support')).to.deep.equal([made[1], similar.body.id].sort());
    const tooLong = await call(`/v1/notes?topic[in]=billing,${'x'.repeat(41)}`);
    expect(tooLong.status).to.equal(400);
    expect(tooLong.body.errors[0].parameter).to.equal('topic[in]');
    // A field not declared filterable offers no [in].
    expect((await call('/v1/notes?body[in]=x')).status).to.equal(400);
  });

  it('takes a writable datetime in any offset, stores the moment, and reads it back as UTC with milliseconds', async () => {
    const created = await call('/v1/notes', { method: 'POST', json: { body: 'Remind me.', remind_at: '2026-12-31T10:30:00+01:00' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.remind_at).to.equal('2026-12-31T09:30:00.000Z');
    expect((await call(`/v1/notes/${created.body.id}`)).body.remind_at).to.equal('2026-12-31T09:30:00.000Z');
    const db = createDb(loadConfig({ ...backend().env, ...env }).database);
    const stored = await db('notes').first('remind_at').where('id', created.body.id).finally(() => db.destroy());
    expect(Number(stored?.remind_at)).to.equal(Date.UTC(2026, 11, 31, 9, 30));
    // The same moment written another way changes nothing.
    const same = await call(`/v1/notes/${created.body.id}`, { method: 'PATCH', json: { remind_at: '2026-12-31T09:30:00Z' } });
    expect(same.status).to.equal(200);
    expect(same.body.updated_at).to.equal(created.body.updated_at);
    const moved = await call(`/v1/notes/${created.body.id}`, { method: 'PATCH', json: { remind_at: '2027-01-02T08:00:00.250-05:00' } });
    expect(moved.body.remind_at).to.equal('2027-01-02T13:00:00.250Z');
    const cleared = await call(`/v1/notes/${created.body.id}`, { method: 'PATCH', json: { remind_at: null } });
    expect(cleared.body.remind_at).to.equal(null);
    for (const bad of ['2026-12-31', 'tomorrow', '2026-13-01T00:00:00Z', 1767173400000]) {
      const refused = await call('/v1/notes', { method: 'POST', json: { body: 'x', remind_at: bad } });
      expect(refused.status, String(bad)).to.equal(422);
      expect(refused.body.errors.map((e: Json) => e.pointer)).to.deep.equal(['/remind_at']);
    }
  });

  it('delivers its events to a subscription, signed', async () => {
    const sub = await call('/v1/webhooks', { method: 'POST', json: { url: `${receiver.url}/notes`, events: ['note.*'] } });
    expect(sub.status).to.equal(201);
    receiver.secrets.set('/notes', [sub.body.secret]);
    const note = await call('/v1/notes', { method: 'POST', json: { body: 'Subscribed.' } });
    await call(`/v1/notes/${note.body.id}`, { method: 'PATCH', json: { pinned: true } });
    await call(`/v1/notes/${note.body.id}`, { method: 'DELETE' });
    const received = await receiver.waitFor(4, (r) => r.path === '/notes');
    const events = received.map((r) => verified(sub.body.secret, r));
    expect(events.map((e) => e.type).sort()).to.deep.equal(['note.created', 'note.deleted', 'note.pinned', 'note.updated']);
    const pinned = events.find((e) => e.type === 'note.pinned');
    expect(pinned?.data).to.deep.include({ previous: { pinned: false } });
    expect((pinned?.data.object as Json).pinned).to.equal(true);
    expect(receiver.rejected).to.deep.equal([]);
  });
});
