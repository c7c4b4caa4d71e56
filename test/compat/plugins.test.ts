import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT_DIR } from '../../src/common/config.js';
import { isolatedDatabase } from '../helpers/backend.js';
import { checkedFetcher } from '../helpers/contract.js';
import { admin, startServer, type ServerProcess } from '../helpers/processes.js';
import { besidePlugins } from '../helpers/beside-plugins.js';

/**
 * Compatibility (docs/reference.md section 18): plugins written against each earlier form of the
 * plugin API, kept as their authors wrote them, boot and serve on this release. A change that
 * breaks one of them breaks this test; it must ship as a deprecation that still works instead.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const HERE = path.join(ROOT_DIR, 'test', 'compat');

/** The shipped plugins and a form's plugin and migration, beside plugins/ and migrations/. */
function install(form: string): ReturnType<typeof besidePlugins> {
  const folders = besidePlugins(`compat-${form}`);
  for (const file of fs.readdirSync(path.join(HERE, form))) folders.place(path.join(HERE, form, file));
  return folders;
}

/** A server with the form's plugin, a workspace and a key of `scopes`; `call` speaks to it, held to its OpenAPI document. */
function served(form: string, scopes: string) {
  const state = {} as { server: ServerProcess; call: (route: string, method?: string, json?: unknown) => Promise<{ status: number; body: Json }>; warnings: () => Json[]; logged: () => Json[] };
  let folders: ReturnType<typeof install>;
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  before(async function () {
    this.timeout(60_000);
    folders = install(form);
    database = await isolatedDatabase(`compat${form.replace(/\W/g, '')}`);
    const env = { ...database.env, PLUGINS_DIR: folders.plugins, MIGRATIONS_DIR: folders.migrations };
    state.server = await startServer(env);
    const ws = await admin(['workspace', 'create', '--name', `Compat ${form}`, '--plan', 'pro', '--json'], env);
    expect(ws.code, ws.stderr).to.equal(0);
    const key = await admin(['key', 'create', '--workspace', (JSON.parse(ws.stdout) as Json).id, '--name', form, '--scopes', scopes, '--json'], env);
    expect(key.code, key.stderr).to.equal(0);
    const token = (JSON.parse(key.stdout) as Json).token as string;
    const api = await checkedFetcher(state.server.url);
    state.call = async (route, method = 'GET', json) => {
      const res = await api(route, { method, headers: { authorization: `Bearer ${token}`, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
    };
    state.logged = () =>
      state.server
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Json);
    state.warnings = () => state.logged().filter((entry) => entry.deprecated === true);
  });
  after(async () => {
    await state.server?.stop();
    await database?.drop();
    folders?.remove();
  });
  return state;
}

describe('compatibility: a plugin of the first form (relative imports of the kernel, idRef(), its own migration with a varchar(300) title)', () => {
  const it_ = served('relative-import', 'read:tickets,write:tickets,read:clients,write:clients');

  it('boots, and warns once for each deprecated form it uses, naming the plugin and what to write instead', () => {
    const warnings = it_.warnings();
    expect(warnings.map((w) => path.basename(String(w.plugin)))).to.deep.equal(['tickets.ts', 'tickets.ts']);
    expect(warnings.map((w) => w.level)).to.deep.equal([40, 40]);
    expect(warnings[0]?.msg).to.contain("import from 'workspace-api/plugin' instead");
    expect(warnings[1]?.msg).to.contain(`field "client_id": idRef('client_', ...) is deprecated: declare the field with ref('client', ...)`);
  });

  it('creates, reads, lists by its reference, updates with its event, and deletes over HTTP; a title of 300 characters fits its varchar(300)', async () => {
    const { call } = it_;
    const client = await call('/v1/clients', 'POST', { name: 'Acme' });
    expect(client.status).to.equal(201);
    const title = 'é'.repeat(300);
    const created = await call('/v1/tickets', 'POST', { title, client_id: client.body.id });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ title, client_id: client.body.id, urgent: false, version: 1 });
    expect(created.body.id).to.match(/^ticket_[0-9a-z]+$/);
    expect((await call(`/v1/tickets/${created.body.id}`)).body).to.deep.equal(created.body);
    expect((await call(`/v1/tickets?client_id=${client.body.id}`)).body.data.map((t: Json) => t.id)).to.deep.equal([created.body.id]);

    const tooLong = await call('/v1/tickets', 'POST', { title: 'x'.repeat(301) });
    expect(tooLong.status).to.equal(422);
    expect(tooLong.body.errors.map((e: Json) => e.pointer)).to.deep.equal(['/title']);
    const unknownClient = await call('/v1/tickets', 'POST', { title: 'Who?', client_id: 'client_doesnotexist' });
    expect(unknownClient.status).to.equal(422);
    expect((await call('/v1/tickets', 'POST', { title: 'Wrong kind of id', client_id: 'deal_abc' })).status).to.equal(422);

    const urgent = await call(`/v1/tickets/${created.body.id}`, 'PATCH', { urgent: true });
    expect(urgent.status).to.equal(200);
    expect(urgent.body).to.include({ urgent: true, version: 2 });
    const events = await call('/v1/events');
    expect(events.body.data.filter((e: Json) => e.resource === 'tickets').map((e: Json) => e.name)).to.deep.equal(['ticket.created', 'ticket.updated', 'ticket.deleted', 'ticket.escalated']);

    expect((await call(`/v1/tickets/${created.body.id}`, 'DELETE')).status).to.equal(204);
    expect((await call(`/v1/tickets/${created.body.id}`)).status).to.equal(404);
  });
});

describe('compatibility: a one-file plugin of the second form (workspace-api/plugin, its migration as migrate:make wrote it)', () => {
  const it_ = served('one-file', 'read:visits,write:visits,read:clients,write:clients');

  it('boots without a deprecation warning', () => {
    expect(it_.warnings()).to.deep.equal([]);
  });

  it('creates with every kind it declares, searches, filters with operators, runs its action, its hook and its state machine over HTTP', async () => {
    const { call } = it_;
    const client = await call('/v1/clients', 'POST', { name: 'Globex' });
    const created = await call('/v1/visits', 'POST', {
      subject: 'Quarterly review of the roadmap',
      contact: 'Ada@Example.com',
      attendees: 4,
      amount: 125_000,
      currency: 'EUR',
      at: '2026-12-31T10:30:00+01:00',
      client_id: client.body.id,
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ at: '2026-12-31T09:30:00.000Z', status: 'planned', confirmed: false, amount: 125_000 });
    const other = await call('/v1/visits', 'POST', { subject: 'Lunch', attendees: 2 });
    expect(other.status).to.equal(201);

    const ids = async (query: string) => ((await call(`/v1/visits?${query}`)).body.data as Json[]).map((v) => v.id as string);
    expect(await ids('q=roadm')).to.deep.equal([created.body.id]);
    expect(await ids('attendees[gte]=3')).to.deep.equal([created.body.id]);
    expect(await ids('contact[in]=ada@example.com')).to.deep.equal([created.body.id]);
    expect(await ids(`client_id=${client.body.id}&status[in]=planned`)).to.deep.equal([created.body.id]);
    expect((await call(`/v1/visits/${created.body.id}?expand=client`)).body.client.name).to.equal('Globex');

    const hook = await call('/v1/visits', 'POST', { subject: 'nothing' });
    expect(hook.status).to.equal(422);
    expect(hook.body.errors).to.deep.equal([{ pointer: '/subject', message: 'must say what the visit is about' }]);

    const confirmed = await call(`/v1/visits/${created.body.id}/confirm`, 'POST', {});
    expect(confirmed.status, JSON.stringify(confirmed.body)).to.equal(200);
    expect(confirmed.body.confirmed).to.equal(true);
    expect((await call(`/v1/visits/${created.body.id}`, 'PATCH', { status: 'done' })).status).to.equal(200);
    const back = await call(`/v1/visits/${created.body.id}`, 'PATCH', { status: 'planned' });
    expect(back.status).to.equal(409);
    expect(back.body.code).to.equal('invalid_transition');
  });

  it('sorts by its fields though its table was made before field sorts: boot warns of each missing index, and the pages walk as with it', async () => {
    const missing = it_.logged().filter((entry) => entry.level === 40 && /has no index "visits_by_/.test(String(entry.msg)));
    expect(missing.map((entry) => /"(visits_by_\w+)"/.exec(String(entry.msg))![1]).sort()).to.deep.equal(['visits_by_amount', 'visits_by_at', 'visits_by_attendees']);
    expect(missing[0]?.msg).to.contain('npm run migrate:make');
    const { call } = it_;
    for (const attendees of [7, 3, 9, 3]) expect((await call('/v1/visits', 'POST', { subject: `Sorted ${attendees}`, attendees })).status).to.equal(201);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: Json } = await call(`/v1/visits?sort=-attendees&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status, JSON.stringify(page.body)).to.equal(200);
      seen.push(...(page.body.data as Json[]).map((v) => v.attendees as number));
      cursor = page.body.next_cursor as string | null;
    } while (cursor);
    // With the visits of the test before (4 and 2 attendees), each once, the most first.
    expect(seen).to.deep.equal([9, 7, 4, 3, 3, 2]);
  });
});
