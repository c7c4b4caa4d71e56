import { expect } from 'chai';
import { args } from '../../src/db/prepared.js';
import { encodeCursor } from '../../src/kernel/query/cursor.js';
import { statementsOf } from '../../src/kernel/storage/store.js';
import type { Row } from '../../src/kernel/model/define.js';
import { insertSamples, sampleRow, seededRandom } from '../../src/demo/samples.js';
import { startApp, type TestApp } from '../helpers/app.js';

interface Page {
  data: Row[];
  has_more: boolean;
  next_cursor: string | null;
}

describe('lists: keyset pagination, sorts and filters', () => {
  let app: TestApp;
  let token: string;
  let workspaceId: string;

  async function get(path: string): Promise<Page> {
    const res = await app.request(path, { token });
    expect(res.status, `${path}: ${res.status}`).to.equal(200);
    return (await res.json()) as Page;
  }

  async function walk(path: string, between?: (page: number) => Promise<void>): Promise<Row[]> {
    const seen: Row[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const page: Page = await get(cursor ? `${path}${sep}cursor=${cursor}` : path);
      seen.push(...page.data);
      expect(page.has_more).to.equal(page.next_cursor !== null);
      cursor = page.next_cursor;
      await between?.(++pages);
    } while (cursor);
    return seen;
  }

  async function insertDeals(count: number, at: (i: number) => number, overrides: Row = {}): Promise<Row[]> {
    const resource = app.registry.byName.get('deal');
    if (!resource) throw new Error('no deal plugin');
    const random = seededRandom(count);
    const rows = Array.from({ length: count }, (_, i) => ({ ...sampleRow(resource, workspaceId, i, new Map(), random, at(i)), ...overrides }));
    await app.deps.db.batchInsert('deals', rows, 100);
    return rows;
  }

  before(async () => {
    app = await startApp();
    ({ token, workspaceId } = await app.workspaceWithKey());
  });
  after(() => app.close());

  it('walks every row exactly once while rows are inserted and deleted during the walk', async () => {
    const base = Date.UTC(2026, 0, 1);
    // Many rows share a millisecond, so the id tiebreak is exercised too.
    const original = await insertDeals(230, (i) => base + Math.floor(i / 3));
    const doomed = new Set(original.filter((_, i) => i % 7 === 0).map((r) => String(r.id)));
    const kept = original.filter((r) => !doomed.has(String(r.id))).map((r) => String(r.id));
    const seen = await walk('/v1/deals?limit=17', async (page) => {
      if (page === 2) await app.deps.db('deals').whereIn('id', [...doomed]).delete();
      if (page <= 4) await insertDeals(5, (i) => base + 1000 + page * 10 + i); // newer rows, at the front
      if (page === 5) await insertDeals(5, (i) => base - 1000 - i); // older rows, at the end
    });
    const ids = seen.map((r) => String(r.id));
    expect(new Set(ids).size).to.equal(ids.length, 'no row twice');
    expect(ids).to.include.members(kept, 'every row that existed for the whole walk');
  });

  it('orders by every sort, with the id breaking ties, and the cursor follows the same order', async () => {
    const { workspaceId: ws, token: t } = await app.workspaceWithKey();
    const resource = app.registry.byName.get('lead');
    if (!resource) throw new Error('no lead plugin');
    const random = seededRandom(7);
    const rows = Array.from({ length: 25 }, (_, i) => {
      const row = sampleRow(resource, ws, i, new Map(), random, Date.UTC(2026, 1, 1) + (i % 5) * 1000);
      row.updated_at = Date.UTC(2026, 2, 1) + ((i * 7) % 25) * 1000;
      return row;
    });
    await app.deps.db.batchInsert('leads', rows, 50);
    for (const sort of ['created_at', '-created_at', 'updated_at', '-updated_at']) {
      const field = sort.replace('-', '');
      const expected = [...rows]
        .sort((a, b) => Number(a[field]) - Number(b[field]) || String(a.id).localeCompare(String(b.id)))
        .map((r) => r.id);
      if (sort.startsWith('-')) expected.reverse();
      const seen: unknown[] = [];
      let cursor: string | null = null;
      do {
        const res = await app.request(`/v1/leads?limit=4&sort=${sort}${cursor ? `&cursor=${cursor}` : ''}`, { token: t });
        const page = (await res.json()) as Page;
        seen.push(...page.data.map((r) => r.id));
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen, sort).to.deep.equal(expected);
    }
  });

  it('defaults to limit 50, newest first, and returns null next_cursor on the last page', async () => {
    const { workspaceId: ws, token: t } = await app.workspaceWithKey();
    await insertSamples(app.deps.db, app.registry, ws, 60);
    const first = (await (await app.request('/v1/clients', { token: t })).json()) as Page;
    expect(first.data).to.have.length(50);
    expect(first.has_more).to.equal(true);
    const times = first.data.map((r) => Date.parse(String(r.created_at)));
    expect(times).to.deep.equal([...times].sort((a, b) => b - a));
    const last = (await (await app.request(`/v1/clients?cursor=${first.next_cursor}`, { token: t })).json()) as Page;
    expect(last).to.include({ has_more: false, next_cursor: null });
    expect(last.data).to.have.length(10);
  });

  it('filters by each state field and each reference, by equality', async () => {
    const { workspaceId: ws, token: t } = await app.workspaceWithKey();
    await insertSamples(app.deps.db, app.registry, ws, 40, { seed: 3 });
    for (const resource of app.registry.resources) {
      for (const filter of resource.def.list.filters) {
        const values = (await app.deps.db(resource.def.table).distinct(filter).where('workspace_id', ws).whereNotNull(filter).limit(2).pluck(filter)) as string[];
        expect(values.length, `${resource.def.table}.${filter} has sample values`).to.be.greaterThan(0);
        for (const value of values) {
          const expected = Number((await app.deps.db(resource.def.table).count({ n: '*' }).where({ workspace_id: ws, [filter]: value }).first())?.n);
          const res = await app.request(`${'/v1' + resource.def.path}?limit=200&${filter}=${value}`, { token: t });
          const page = (await res.json()) as Page;
          expect(page.data.length, `${resource.def.path}?${filter}=${value}`).to.equal(expected);
          expect(page.data.every((r) => r[filter] === value)).to.equal(true);
        }
      }
    }
  });

  it('filters by updated_since (inclusive), for incremental sync', async () => {
    const { workspaceId: ws, token: t } = await app.workspaceWithKey();
    const resource = app.registry.byName.get('client');
    if (!resource) throw new Error('no client plugin');
    const random = seededRandom(1);
    const rows: Row[] = [0, 1, 2, 3].map((i) => ({ ...sampleRow(resource, ws, i, new Map(), random, Date.UTC(2026, 5, 1)), updated_at: Date.UTC(2026, 5, 1 + i) }));
    await app.deps.db.batchInsert('clients', rows, 10);
    const page = (await (await app.request('/v1/clients?updated_since=2026-06-03T00:00:00.000Z&sort=updated_at', { token: t })).json()) as Page;
    expect(page.data.map((r) => r.id)).to.deep.equal([rows[2]?.id, rows[3]?.id]);
    const offset = (await (await app.request('/v1/clients?updated_since=2026-06-03T02:00:00%2B02:00', { token: t })).json()) as Page;
    expect(offset.data).to.have.length(2, 'an offset is honoured');
    // Every form the date-time format lets through: an offset without its minutes, a leap
    // second (the first instant of the next day). Date.parse read both as NaN: an empty page.
    for (const since of ['2026-06-03T02:00:00%2B02', '2026-06-02T23:59:60Z']) {
      const res = await app.request(`/v1/clients?updated_since=${since}`, { token: t });
      expect(((await res.json()) as Page).data.map((r) => r.id), since).to.have.members([rows[2]?.id, rows[3]?.id]);
    }
  });

  it('returns one object by id with RFC 3339 UTC millisecond times', async () => {
    const [row] = await insertDeals(1, () => Date.UTC(2026, 3, 4, 5, 6, 7, 89));
    const res = await app.request(`/v1/deals/${row?.id}`, { token });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as Row;
    expect(body).to.include({ id: row?.id, title: row?.title, created_at: '2026-04-04T05:06:07.089Z', updated_at: '2026-04-04T05:06:07.089Z' });
    expect(body).not.to.have.property('workspace_id');
  });

  it('reads a page and an object as the driver would have built their rows, every column in its place', async () => {
    const resource = app.registry.byName.get('deal');
    if (!resource) throw new Error('no deal plugin');
    const [full] = await insertDeals(1, () => Date.UTC(2026, 3, 5), { title: 'Ünïcode “deal” 🚀', amount: 2 ** 40, currency: 'EUR', stage: 'won', expected_close_date: '2026-12-31' });
    await insertDeals(2, (i) => Date.UTC(2026, 3, 6) + i, { amount: null, currency: null, client_id: null, expected_close_date: null });
    const s = statementsOf(app.deps.db, resource);
    const page = s.pages.get('created_at:desc:first');
    if (!page) throw new Error('no page statement');
    const values = args(page, { workspace_id: workspaceId, limit: 500 });
    const rows = await app.deps.reads.rows(page.sql, values, s.rowOf);
    expect(rows).to.have.length.of.at.least(3);
    expect(rows).to.deep.equal(await app.deps.reads.all(page.sql, values));
    const one = args(s.object, { workspace_id: workspaceId, id: full?.id });
    const [object] = await app.deps.reads.rows(s.object.sql, one, s.rowOf);
    expect(object).to.deep.equal((await app.deps.reads.all(s.object.sql, one))[0]);
    expect(object).to.include({ id: full?.id, title: 'Ünïcode “deal” 🚀', currency: 'EUR', stage: 'won' });
    expect(Number(object?.amount)).to.equal(2 ** 40);
  });

  // Infinity and 1e400 once lifted the page cap (every row in one page); -Infinity was a 500.
  for (const limit of ['0', '201', '-1', 'abc', '1.5', '', 'Infinity', '-Infinity', '1e400', '1e1', '0x10', '%205', '5%20', '%2B5', '1_0', 'NaN', '9'.repeat(400)]) {
    it(`refuses limit=${limit.slice(0, 20)} with 400 invalid_parameter, on lists of resources, webhooks and deliveries`, async () => {
      for (const path of ['/v1/deals', '/v1/webhooks', '/v1/webhooks/wh_nope/deliveries']) {
        const res = await app.request(`${path}?limit=${limit}`, { token });
        expect(res.status, `${path}?limit=${limit}`).to.equal(400);
        const body = (await res.json()) as { code: string; errors: Array<{ parameter: string; message: string }> };
        expect(body.code).to.equal('invalid_parameter');
        expect(body.errors.map((e) => e.parameter)).to.include('limit');
        expect(body.errors.find((e) => e.parameter === 'limit')?.message).to.match(/integer from 1 to 200/);
      }
    });
  }

  it('accepts limit=1 and limit=200', async () => {
    expect((await get('/v1/deals?limit=1')).data).to.have.length(1);
    expect((await get('/v1/deals?limit=200')).data.length).to.be.at.most(200);
  });

  it('refuses unknown parameters, repeated parameters, unknown sorts and unknown state values', async () => {
    for (const query of ['colour=red', 'limit=5&limit=6', 'sort=title', 'sort=-id', 'stage=closed', 'updated_since=yesterday', 'client_id=deal_abc']) {
      const res = await app.request(`/v1/deals?${query}`, { token });
      expect(res.status, query).to.equal(400);
      expect(((await res.json()) as { code: string }).code).to.equal('invalid_parameter');
    }
    // A get takes expand (section 14) and nothing else.
    const res = await app.request('/v1/deals/deal_x?colour=red', { token });
    expect(res.status).to.equal(400);
  });

  it('refuses a malformed cursor, one of another resource and one of another sort', async () => {
    const deals = await get('/v1/deals?limit=1');
    const byUpdated = await get('/v1/deals?limit=1&sort=updated_at');
    const cases: Array<[string, RegExp]> = [
      ['%%%', /malformed/],
      ['eyJmb28iOjF9', /malformed/],
      [Buffer.from('{"r":"deal","s":"-created_at","v":"x","i":"deal_a"}').toString('base64url'), /malformed/],
      [encodeCursor({ resource: 'lead', sort: '-created_at', value: 1, id: 'lead_a' }), /another resource/],
      [String(byUpdated.next_cursor), /sort=updated_at/],
    ];
    for (const [cursor, detail] of cases) {
      const res = await app.request(`/v1/deals?cursor=${encodeURIComponent(cursor)}`, { token });
      expect(res.status, cursor).to.equal(400);
      const body = (await res.json()) as { code: string; detail: string };
      expect(body.code).to.equal('invalid_cursor');
      expect(body.detail).to.match(detail);
    }
    expect((await app.request(`/v1/deals?cursor=${deals.next_cursor}`, { token })).status).to.equal(200);
  });
});
