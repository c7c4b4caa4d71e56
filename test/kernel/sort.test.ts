import { expect } from 'chai';
import { encodeCursor } from '../../src/kernel/query/cursor.js';
import type { Row } from '../../src/kernel/model/define.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

interface Page {
  data: Row[];
  has_more: boolean;
  next_cursor: string | null;
}

/** docs/reference.md section 3: lists sort by any field whose kind sorts, keyset-paginated; objects without a value come last. */
describe('lists sorted by a field (sort=amount, sort=-expected_close_date)', () => {
  let app: TestApp;
  let token: string;
  let deals: Array<{ id: string; title: string; amount: number | null; date: string | null; stage: string }>;

  async function get(path: string): Promise<Page> {
    const res = await app.request(path, { token });
    expect(res.status, `${path}: ${await res.clone().text()}`).to.equal(200);
    return (await res.json()) as Page;
  }

  /** Every page of `path`, `limit` at a time: the ids in the order the pages gave them. */
  async function walk(path: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await get(cursor ? `${path}&cursor=${cursor}` : path);
      ids.push(...page.data.map((d) => String(d.id)));
      expect(page.has_more).to.equal(page.next_cursor !== null);
      cursor = page.next_cursor;
    } while (cursor);
    return ids;
  }

  /** The order the contract gives: by value in the sort's direction, ties by id in the same direction, objects without a value last, by id. */
  function expected(value: (d: (typeof deals)[number]) => number | string | null, desc: boolean, only: (d: (typeof deals)[number]) => boolean = () => true): string[] {
    const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0) * (desc ? -1 : 1);
    const chosen = deals.filter(only);
    const valued = chosen.filter((d) => value(d) !== null).sort((a, b) => cmp(value(a)!, value(b)!) || cmp(a.id, b.id));
    const without = chosen.filter((d) => value(d) === null).sort((a, b) => cmp(a.id, b.id));
    return [...valued, ...without].map((d) => d.id);
  }

  before(async () => {
    app = await startApp();
    ({ token } = await app.workspaceWithKey());
    // Ties (100 twice, a date twice), and objects without an amount or a date, spread among the others.
    const amounts = [500, 100, null, 300, 100, null, 900, 0, null, 250, 100];
    const dates = ['2027-03-01', null, '2026-12-24', '2027-03-01', null, '2026-01-05', '2028-07-14', null, '2027-01-01', '2026-12-24', null];
    deals = [];
    for (const [i, amount] of amounts.entries()) {
      const body = { title: `Sorted deal ${i} find-me`, ...(amount !== null ? { amount, currency: 'EUR' } : {}), ...(dates[i] ? { expected_close_date: dates[i] } : {}), stage: i % 2 === 0 ? 'won' : 'lead' };
      const res = await app.request('/v1/deals', { token, method: 'POST', json: body });
      expect(res.status, await res.clone().text()).to.equal(201);
      const deal = (await res.json()) as { id: string };
      deals.push({ id: deal.id, title: body.title, amount, date: dates[i] ?? null, stage: body.stage });
    }
  });
  after(() => app.close());

  it('walks every deal once by amount, either way, the largest first with -amount, those without an amount last', async () => {
    for (const limit of [2, 3, 50]) {
      expect(await walk(`/v1/deals?sort=-amount&limit=${limit}`), `-amount, ${limit} a page`).to.deep.equal(expected((d) => d.amount, true));
      expect(await walk(`/v1/deals?sort=amount&limit=${limit}`), `amount, ${limit} a page`).to.deep.equal(expected((d) => d.amount, false));
    }
    const first = await get('/v1/deals?sort=-amount&limit=3');
    expect(first.data.map((d) => d.amount)).to.deep.equal([900, 500, 300]);
  });

  it('sorts by a date (stored as its text) and walks into the objects without one', async () => {
    expect(await walk('/v1/deals?sort=-expected_close_date&limit=4')).to.deep.equal(expected((d) => d.date, true));
    expect(await walk('/v1/deals?sort=expected_close_date&limit=4')).to.deep.equal(expected((d) => d.date, false));
  });

  it('sorts a filtered list and a search the same way', async () => {
    expect(await walk('/v1/deals?sort=-amount&limit=2&stage=won')).to.deep.equal(expected((d) => d.amount, true, (d) => d.stage === 'won'));
    expect(await walk('/v1/deals?sort=amount&limit=2&amount[gte]=100')).to.deep.equal(expected((d) => d.amount, false, (d) => d.amount !== null && d.amount >= 100));
    expect(await walk('/v1/deals?sort=-amount&limit=2&q=find-me')).to.deep.equal(expected((d) => d.amount, true));
  });

  it('sorts by the kernel times as before, and documents every sort', async () => {
    expect(await walk('/v1/deals?sort=created_at&limit=4')).to.deep.equal(deals.map((d) => d.id));
    const doc = (await (await app.request('/v1/openapi.json')).json()) as { paths: Record<string, { get: { parameters: Array<{ name: string; schema: { enum?: string[] } }> } }> };
    const sort = doc.paths['/deals']!.get.parameters.find((p) => p.name === 'sort');
    expect(sort?.schema.enum).to.include.members(['created_at', '-created_at', 'amount', '-amount', 'expected_close_date', '-expected_close_date']);
    expect(sort?.schema.enum).not.to.include('title');
  });

  it('refuses a sort by a field that does not sort, a cursor of another sort, and a cursor whose value is not the sort\'s', async () => {
    const bad = await problem(await app.request('/v1/deals?sort=-title', { token }), 400, 'invalid_parameter');
    expect(bad.errors?.[0]).to.include({ parameter: 'sort' });
    const page = await get('/v1/deals?sort=-amount&limit=2');
    const other = await problem(await app.request(`/v1/deals?sort=amount&cursor=${page.next_cursor!}`, { token }), 400, 'invalid_cursor');
    expect(other.detail).to.contain('sort=-amount');
    // Made by hand: a text where an amount goes, a null for a sort whose column holds none.
    const text = encodeCursor({ resource: 'deal', sort: '-amount', value: '2026-01-01', id: deals[0]!.id });
    await problem(await app.request(`/v1/deals?sort=-amount&cursor=${text}`, { token }), 400, 'invalid_cursor');
    const none = encodeCursor({ resource: 'deal', sort: '-created_at', value: null, id: deals[0]!.id });
    await problem(await app.request(`/v1/deals?sort=-created_at&cursor=${none}`, { token }), 400, 'invalid_cursor');
    const number = encodeCursor({ resource: 'deal', sort: 'expected_close_date', value: 5, id: deals[0]!.id });
    await problem(await app.request(`/v1/deals?sort=expected_close_date&cursor=${number}`, { token }), 400, 'invalid_cursor');
  });
});
