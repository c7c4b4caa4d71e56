import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import knex, { type Knex } from 'knex';
import { loadConfig } from '../../src/common/config.js';
import { FolderMigrationSource, migrateLatest } from '../../src/db/migrate.js';
import type { Row } from '../../src/kernel/model/define.js';
import { COMMON_WALK, DRIVING_MATCHES, reindexStale } from '../../src/kernel/storage/search-index.js';
import { manualClock, startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

interface Page {
  data: Row[];
  has_more: boolean;
  next_cursor: string | null;
}

const SCOPES = ['read:deals', 'write:deals', 'read:clients', 'write:clients', 'read:leads', 'write:leads', 'read:invoices', 'write:invoices', 'read:proposals', 'write:proposals'];

/** docs/reference.md section 14: `q=` on every list with searchable fields. */
describe('search: q= on lists', () => {
  const clock = manualClock(Date.UTC(2026, 5, 1));
  let app: TestApp;
  let token: string;
  let workspaceId: string;

  async function create(path: string, json: unknown, as = token): Promise<Row> {
    const res = await app.request(path, { token: as, method: 'POST', json });
    expect(res.status, await res.clone().text()).to.equal(201);
    clock.advance(1000);
    return (await res.json()) as Row;
  }

  async function page(path: string, as = token): Promise<Page> {
    const res = await app.request(path, { token: as });
    expect(res.status, `${path}: ${await res.clone().text()}`).to.equal(200);
    return (await res.json()) as Page;
  }

  /** Every object of a walk by cursor, in the order the pages gave them. */
  async function walk(path: string, limit: number): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const p: Page = await page(`${path}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...p.data.map((o) => String(o.id)));
      cursor = p.next_cursor;
      expect(p.has_more).to.equal(cursor !== null);
    } while (cursor);
    return seen;
  }

  const found = async (path: string) => (await page(path)).data.map((o) => String(o.id)).sort();
  const idsOf = (...rows: Row[]) => rows.map((o) => String(o.id)).sort();
  const termCount = async () => Number(((await app.deps.db('search_terms').where('workspace_id', workspaceId).count({ n: '*' })) as Array<{ n: number | string }>)[0]?.n);

  before(async () => {
    app = await startApp({ clock });
    ({ token, workspaceId } = await app.workspaceWithKey({ scopes: SCOPES }));
  });
  after(() => app.close());

  it('finds clients by the start of any word of name, company or email, whatever the case and accents', async () => {
    const muller = await create('/v1/clients', { name: 'Jörg Müller-Lüdenscheidt', company: 'Acme GmbH', email: 'jm@acme-berlin.de' });
    const acme = await create('/v1/clients', { name: 'ACME Corporation', email: 'hello@example.com' });
    const other = await create('/v1/clients', { name: 'Initech', company: 'Initrode', email: 'peter@initech.example' });
    expect(await found('/v1/clients?q=acme')).to.deep.equal(idsOf(muller, acme));
    expect(await found('/v1/clients?q=MULL')).to.deep.equal(idsOf(muller));
    expect(await found('/v1/clients?q=l%C3%BCden')).to.deep.equal(idsOf(muller));
    expect(await found('/v1/clients?q=berl')).to.deep.equal(idsOf(muller), 'a word of the email');
    expect(await found('/v1/clients?q=init')).to.deep.equal(idsOf(other));
    // A prefix of a word, not a part inside it.
    expect(await found('/v1/clients?q=cme')).to.deep.equal([]);
    expect(await found('/v1/clients?q=nitech')).to.deep.equal([]);
  });

  it('needs every word, each in any of the fields; an email or number as typed finds its object', async () => {
    const a = await create('/v1/leads', { name: 'Grace Hopper', company: 'Navy Labs', email: 'grace.hopper@navy.example' });
    const b = await create('/v1/leads', { name: 'Grace Kelly', company: 'Monaco' });
    expect(await found('/v1/leads?q=grace')).to.deep.equal(idsOf(a, b));
    expect(await found('/v1/leads?q=grace%20navy')).to.deep.equal(idsOf(a));
    expect(await found('/v1/leads?q=gra%20ho')).to.deep.equal(idsOf(a));
    expect(await found('/v1/leads?q=grace%20paris')).to.deep.equal([]);
    expect(await found(`/v1/leads?q=${encodeURIComponent('grace.hopper@navy')}`)).to.deep.equal(idsOf(a));
    const invoice = await create('/v1/invoices', { number: 'INV-2026-0042' });
    await create('/v1/invoices', { number: 'INV-2025-0042' });
    expect(await found(`/v1/invoices?q=${encodeURIComponent('INV-2026-00')}`)).to.deep.equal(idsOf(invoice));
    const proposal = await create('/v1/proposals', { title: 'Redesign, phase 1' });
    expect(await found('/v1/proposals?q=phase')).to.deep.equal(idsOf(proposal));
  });

  it('keeps the list order and its cursors: every match exactly once, in either sort', async () => {
    const matching: Row[] = [];
    for (let i = 0; i < 9; i++) {
      matching.push(await create('/v1/deals', { title: `Website redesign ${i}`, amount: i * 1000, currency: 'EUR' }));
      await create('/v1/deals', { title: `Logo ${i}` });
    }
    // A change moves an object in the updated_at order; the search follows.
    const moved = await app.request(`/v1/deals/${String(matching[2]?.id)}`, { token, method: 'PATCH', json: { amount: 99 } });
    expect(moved.status).to.equal(200);
    for (const sort of ['-created_at', 'created_at', '-updated_at', 'updated_at']) {
      const all = (await page(`/v1/deals?sort=${sort}&limit=100`)).data.filter((d) => String(d.title).startsWith('Website')).map((d) => String(d.id));
      expect(all).to.have.length(9);
      expect(await walk(`/v1/deals?q=web&sort=${sort}`, 2), sort).to.deep.equal(all);
    }
  });

  it(`walks the list's index when every word is common (over ${DRIVING_MATCHES.toLocaleString('en')} objects), and still gives every match once`, async () => {
    const count = DRIVING_MATCHES + 100;
    const made: Row[] = [];
    for (let at = 0; at < count; at += 100) {
      const res = await app.request('/v1/deals/batch', { token, method: 'POST', json: { data: Array.from({ length: 100 }, (_, i) => ({ title: `Kangaroo ${at + i}` })) } });
      expect(res.status).to.equal(201);
      made.push(...((await res.json()) as { data: Row[] }).data);
      clock.advance(1000);
    }
    // Newest first: batches by their time, and within a batch (one time) by id, descending.
    const newestFirst = [...made].sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)) || String(b.id).localeCompare(String(a.id))).map((d) => String(d.id));
    expect(await walk('/v1/deals?q=kangaroo', 200)).to.deep.equal(newestFirst);
    expect(await walk('/v1/deals?q=kangaroo&sort=created_at', 150)).to.deep.equal([...newestFirst].reverse());
    // With a rarer word, its matches drive; the common one is checked against them.
    const sevens = made.filter((d) => String(d.title).split(' ')[1]?.startsWith('7')).map((d) => String(d.id));
    expect(sevens.length).to.be.within(2, DRIVING_MATCHES);
    expect(await walk('/v1/deals?q=kangaroo%207', 40)).to.deep.equal(newestFirst.filter((id) => sevens.includes(id)));
  });

  it(`walks common words past ${COMMON_WALK.rows.toLocaleString('en')} rows checked in turn, then lets the index narrow the rest of the page: every match once`, async () => {
    // A workspace of its own: 4,200 deals, "Alpha n" and "Beta n" by turns, "Alpha Beta n" one in 350.
    const own = await app.workspaceWithKey({ scopes: SCOPES });
    const made: Row[] = [];
    for (let at = 0; at < 4_200; at += 100) {
      const titles = Array.from({ length: 100 }, (_, i) => at + i).map((n) => (n % 350 === 7 ? `Alpha Beta ${n}` : n % 2 === 0 ? `Alpha ${n}` : `Beta ${n}`));
      const res = await app.request('/v1/deals/batch', { token: own.token, method: 'POST', json: { data: titles.map((title) => ({ title })) } });
      expect(res.status).to.equal(201);
      made.push(...((await res.json()) as { data: Row[] }).data);
      clock.advance(1000);
    }
    const newestFirst = (rows: Row[]) => [...rows].sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)) || String(b.id).localeCompare(String(a.id))).map((d) => String(d.id));
    const alphas = made.filter((d) => String(d.title).startsWith('Alpha'));
    const both = made.filter((d) => String(d.title).startsWith('Alpha Beta'));
    expect(alphas.length).to.be.greaterThan(DRIVING_MATCHES);
    expect(made.length - alphas.length + both.length).to.be.greaterThan(DRIVING_MATCHES);
    expect(both).to.have.length(12);
    const walkAs = async (path: string, limit: number) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await app.request(`${path}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: own.token });
        expect(res.status, await res.clone().text()).to.equal(200);
        const p = (await res.json()) as Page;
        seen.push(...p.data.map((o) => String(o.id)));
        cursor = p.next_cursor;
      } while (cursor);
      return seen;
    };
    // Both words common, seldom together: a page walks 1,000 rows, finds 2 or 3, and the index gives the rest.
    expect(await walkAs('/v1/deals?q=alpha%20beta', 5)).to.deep.equal(newestFirst(both));
    expect(await walkAs('/v1/deals?q=beta%20alp&sort=created_at', 4)).to.deep.equal(newestFirst(both).reverse());
    // A rarer word drives ("1": 1,111 deals) and the common ones are checked on its matches, past 1,000 of them too.
    const ones = both.filter((d) => String(d.title).split(' ')[2]?.startsWith('1'));
    expect(ones).to.have.length(3);
    expect(await walkAs('/v1/deals?q=alpha%20beta%201', 2)).to.deep.equal(newestFirst(ones));
    // One common word in about half the rows: a page of 200 walks a chunk of 201 rows, then one of 799.
    expect(await walkAs('/v1/deals?q=alpha&sort=created_at', 200)).to.deep.equal(newestFirst(alphas).reverse());
    expect(await walkAs('/v1/deals?q=alpha&stage=lead', 100)).to.deep.equal(newestFirst(alphas));
  });

  it('combines with filters and operators', async () => {
    const client = await create('/v1/clients', { name: 'Umbrella' });
    const hit = await create('/v1/deals', { title: 'Umbrella rollout', amount: 50000, currency: 'EUR', stage: 'won', client_id: client.id });
    await create('/v1/deals', { title: 'Umbrella pilot', amount: 500, currency: 'EUR', stage: 'won', client_id: client.id });
    await create('/v1/deals', { title: 'Umbrella renewal', amount: 90000, currency: 'EUR', stage: 'lost' });
    expect(await found(`/v1/deals?q=umbrella&stage[in]=won&amount[gte]=1000`)).to.deep.equal(idsOf(hit));
    expect(await found(`/v1/deals?q=umbrella&client_id=${String(client.id)}&amount[gte]=1000`)).to.deep.equal(idsOf(hit));
    const expanded = await page(`/v1/deals?q=rollout&expand=client`);
    expect(expanded.data).to.have.length(1);
    expect((expanded.data[0]?.client as Row).name).to.equal('Umbrella');
  });

  it('follows every write: update, delete and batch create, and nothing of another workspace', async () => {
    const deal = await create('/v1/deals', { title: 'Zeppelin launch' });
    expect(await found('/v1/deals?q=zepp')).to.deep.equal(idsOf(deal));
    const renamed = await app.request(`/v1/deals/${String(deal.id)}`, { token, method: 'PATCH', json: { title: 'Airship launch' } });
    expect(renamed.status).to.equal(200);
    expect(await found('/v1/deals?q=zepp')).to.deep.equal([]);
    expect(await found('/v1/deals?q=airsh%20laun')).to.deep.equal(idsOf(deal));
    const batch = await app.request('/v1/deals/batch', { token, method: 'POST', json: { data: [{ title: 'Quokka one' }, { title: 'Quokka two' }] } });
    expect(batch.status).to.equal(201);
    expect(await found('/v1/deals?q=quokka')).to.deep.equal(idsOf(...((await batch.json()) as { data: Row[] }).data));
    const gone = await app.request(`/v1/deals/${String(deal.id)}`, { token, method: 'DELETE' });
    expect(gone.status).to.equal(204);
    expect(await found('/v1/deals?q=airship')).to.deep.equal([]);
    expect(await app.deps.db('search_terms').where('object_id', String(deal.id)).count({ n: '*' }).first()).to.satisfy((r: { n: number | string }) => Number(r.n) === 0);

    const other = await app.workspaceWithKey({ scopes: SCOPES });
    await create('/v1/deals', { title: 'Quokka three' }, other.token);
    expect(await found('/v1/deals?q=quokka')).to.have.length(2);
    expect((await page('/v1/deals?q=quokka', other.token)).data.map((d) => d.title)).to.deep.equal(['Quokka three']);
  });

  it('writes no term for what fails: a batch refused at one item, a create with a missing reference', async () => {
    const before = await termCount();
    const batch = await app.request('/v1/deals/batch', { token, method: 'POST', json: { data: [{ title: 'Wombat one' }, { title: 'Wombat two', client_id: 'client_doesnotexist' }] } });
    expect(batch.status).to.equal(422);
    const single = await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Wombat three', client_id: 'client_doesnotexist' } });
    expect(single.status).to.equal(422);
    expect(await termCount()).to.equal(before);
    expect(await found('/v1/deals?q=wombat')).to.deep.equal([]);
  });

  it('refuses a q with no word, too many words, or too long, naming q', async () => {
    for (const [q, says] of [
      ['--', /no word/],
      ['a b c d e f g h i', /9 words; a search takes at most 8/],
      ['', /^must not be empty$/],
      ['x'.repeat(201), /^must be at most 200 characters long$/],
    ] as const) {
      const body = await problem(await app.request(`/v1/deals?q=${encodeURIComponent(q)}`, { token }), 400, 'invalid_parameter');
      expect(body.errors?.[0]?.parameter, q).to.equal('q');
      expect(body.errors?.[0]?.message, q).to.match(says);
    }
  });

  it('is in the OpenAPI document on the lists that search, naming their fields', async () => {
    const doc = (await (await app.request('/v1/openapi.json')).json()) as { paths: Record<string, { get: { parameters: Array<{ name: string; description?: string; schema?: { description?: string } }> } }> };
    const q = (path: string) => doc.paths[path]?.get.parameters.find((p) => p.name === 'q');
    const said = (path: string) => `${q(path)?.description ?? ''} ${q(path)?.schema?.description ?? ''}`;
    expect(said('/clients')).to.include('name, email, company');
    expect(said('/invoices')).to.include('number');
    expect(said('/deals')).to.include('title');
  });

  it('makes the terms of objects stored before search at start-up, once', async () => {
    await reindexStale(app.deps.db, app.registry, clock.now());
    const deal = await create('/v1/deals', { title: 'Narwhal expedition' });
    // As a database from before search: objects, and no term.
    await app.deps.db('search_terms').where('resource', 'deal').delete();
    await app.deps.db('search_indexed').where('resource', 'deal').delete();
    expect(await found('/v1/deals?q=narwhal')).to.deep.equal([]);
    const made = await reindexStale(app.deps.db, app.registry, clock.now());
    expect(made.map((r) => r.resource)).to.deep.equal(['deal']);
    expect(made[0]?.objects).to.equal(Number(((await app.deps.db('deals').count({ n: '*' })) as Array<{ n: number | string }>)[0]?.n));
    expect(await found('/v1/deals?q=narwhal%20exped')).to.deep.equal(idsOf(deal));
    expect(await found('/v1/deals?q=website')).to.have.length(9);
    expect(await reindexStale(app.deps.db, app.registry, clock.now())).to.deep.equal([]);
  });
});

describe('the terms table on SQLite', () => {
  const CLUSTERED = '20261126000600_search_terms_clustered';
  let dir: string;
  let db: Knex;
  const schema = async () => ((await db.raw("SELECT sql FROM sqlite_master WHERE name = 'search_terms'")) as Array<{ sql: string }>)[0]?.sql ?? '';
  const rows = () => db('search_terms').orderBy('term').select('term', 'object_id');
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-terms-'));
    db = knex({ client: 'better-sqlite3', connection: { filename: path.join(dir, 'terms.db') }, useNullAsDefault: true });
  });
  after(async () => {
    await db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps its rows in its primary key alone (WITHOUT ROWID), and its migration keeps every row both ways', async () => {
    const migrations = loadConfig({}).migrationsDirs;
    await migrateLatest(db, migrations);
    expect(await schema()).to.match(/WITHOUT ROWID$/);
    await db('workspaces').insert({ id: 'ws_t', name: 't', plan: 'pro', created_at: 1, updated_at: 1 });
    await db('search_terms').insert([
      { workspace_id: 'ws_t', resource: 'deal', term: 'acme', created_at: 5, object_id: 'deal_1' },
      { workspace_id: 'ws_t', resource: 'deal', term: 'corp', created_at: 5, object_id: 'deal_1' },
    ]);
    const kept = [
      { term: 'acme', object_id: 'deal_1' },
      { term: 'corp', object_id: 'deal_1' },
    ];
    await db.migrate.down({ name: CLUSTERED, migrationSource: new FolderMigrationSource(migrations) });
    expect(await schema()).to.not.match(/WITHOUT ROWID/);
    expect(await rows()).to.deep.equal(kept);
    await migrateLatest(db, migrations);
    expect(await schema()).to.match(/WITHOUT ROWID$/);
    expect(await rows()).to.deep.equal(kept);
    // Still the workspace's: deleting it deletes its terms.
    await db.raw('PRAGMA foreign_keys = ON');
    await db('workspaces').where('id', 'ws_t').delete();
    expect(await rows()).to.deep.equal([]);
  });
});
