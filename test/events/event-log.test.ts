import { expect } from 'chai';
import { manualClock, startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

type Event = { id: string; type: string; created_at: string; data: { object: { id: string }; previous: Record<string, unknown> } };
type Page = { data: Event[]; has_more: boolean; next_cursor: string | null };

describe('the event log', () => {
  const clock = manualClock(Date.UTC(2026, 10, 22, 8));
  let app: TestApp;
  let token: string;
  let workspaceId: string;

  async function write(method: string, path: string, json?: unknown): Promise<{ id: string }> {
    clock.advance(1000);
    const res = await app.request(path, { token, method, ...(json !== undefined ? { json } : {}) });
    expect(res.status, await res.clone().text()).to.be.oneOf([200, 201]);
    return (await res.json()) as { id: string };
  }

  async function page(query: string, as = token): Promise<Page> {
    const res = await app.request(`/v1/event-log${query}`, { token: as });
    expect(res.status, await res.clone().text()).to.equal(200);
    return (await res.json()) as Page;
  }

  async function walk(query: string, as = token, during?: () => Promise<void>): Promise<Event[]> {
    const all: Event[] = [];
    let cursor: string | null = null;
    do {
      const p = await page(`${query}${cursor ? `&cursor=${cursor}` : ''}`, as);
      all.push(...p.data);
      cursor = p.next_cursor;
      if (during) await during();
    } while (cursor);
    return all;
  }

  before(async () => {
    app = await startApp({ clock });
    ({ token, workspaceId } = await app.workspaceWithKey());
    const client = await write('POST', '/v1/clients', { name: 'Acme' });
    const deal = await write('POST', '/v1/deals', { title: 'Big one', client_id: client.id });
    await write('PATCH', `/v1/deals/${deal.id}`, { stage: 'won' });
    const invoice = await write('POST', '/v1/invoices', { number: 'INV-1', client_id: client.id });
    await write('PATCH', `/v1/invoices/${invoice.id}`, { status: 'open' });
    await write('PATCH', `/v1/invoices/${invoice.id}`, { status: 'paid' });
  });
  after(() => app.close());

  it('lists the events newest first, each byte for byte as stored for delivery, and one by id', async () => {
    const res = await app.request('/v1/event-log?limit=200', { token });
    const text = await res.text();
    const stored = (await app.deps.db('events').select('id', 'payload').where({ workspace_id: workspaceId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])) as Array<{ id: string; payload: string }>;
    expect(stored.length).to.equal(9);
    // The page holds the stored payloads themselves, not a re-serialisation.
    for (const row of stored) expect(text).to.contain(row.payload);
    const body = JSON.parse(text) as Page;
    expect(body.data.map((e) => e.id)).to.deep.equal(stored.map((r) => r.id));
    // The last write (invoice paid) made two events at one instant: they come first.
    expect(new Set(body.data.slice(0, 2).map((e) => e.type))).to.deep.equal(new Set(['invoice.paid', 'invoice.updated']));
    expect(body.data[body.data.length - 1]?.type).to.equal('client.created');
    const one = await app.request(`/v1/event-log/${stored[0]?.id}`, { token });
    expect(one.status).to.equal(200);
    expect(await one.text()).to.equal(stored[0]?.payload);
  });

  it('pages with a cursor in either order, and every event there at the start appears once while more are written', async () => {
    const before = (await page('?limit=200')).data.map((e) => e.id);
    let extra = 0;
    const newestFirst = await walk('?limit=3', token, async () => {
      if (extra++ < 3) await write('POST', '/v1/clients', { name: `During ${extra}` });
    });
    const ids = newestFirst.map((e) => e.id);
    expect(new Set(ids).size).to.equal(ids.length, 'no event twice');
    for (const id of before) expect(ids).to.include(id);
    const oldestFirst = await walk('?limit=4&sort=created_at');
    const times = oldestFirst.map((e) => e.created_at);
    expect(times).to.deep.equal([...times].sort());
    expect(oldestFirst.length).to.equal(before.length + 3);
    // A cursor made for one sort is refused by the other.
    const first = await page('?limit=1');
    await problem(await app.request(`/v1/event-log?limit=1&sort=created_at&cursor=${first.next_cursor}`, { token }), 400, 'invalid_cursor');
  });

  it('filters by type patterns and by time', async () => {
    const deals = await walk('?limit=200&type=deal.*');
    expect(deals.map((e) => e.type).sort()).to.deep.equal(['deal.created', 'deal.stage_changed', 'deal.updated']);
    const mixed = await walk('?limit=200&type=invoice.paid,client.created');
    expect(new Set(mixed.map((e) => e.type))).to.deep.equal(new Set(['invoice.paid', 'client.created']));
    const all = await walk('?limit=200&sort=created_at');
    const cut = all[3]?.created_at as string;
    const since = await walk(`?limit=200&sort=created_at&since=${encodeURIComponent(cut)}`);
    expect(since.map((e) => e.id)).to.deep.equal(all.filter((e) => e.created_at >= cut).map((e) => e.id));
    const until = await walk(`?limit=200&sort=created_at&until=${encodeURIComponent(cut)}`);
    expect(until.map((e) => e.id)).to.deep.equal(all.filter((e) => e.created_at < cut).map((e) => e.id));
    // The same instant with an offset of hours alone (+00, a form the format takes), which Date.parse could not read.
    const hours = await walk(`?limit=200&sort=created_at&since=${encodeURIComponent(cut.replace('Z', '+00'))}`);
    expect(hours.map((e) => e.id)).to.deep.equal(since.map((e) => e.id));
    const bad = await problem(await app.request('/v1/event-log?type=deal.*,deals.*', { token }), 400, 'invalid_parameter');
    expect(bad.detail).to.contain('deals.*');
    await problem(await app.request('/v1/event-log?since=yesterday', { token }), 400, 'invalid_parameter');
    await problem(await app.request('/v1/event-log?sort=type', { token }), 400, 'invalid_parameter');
    // A window that ends before it begins is refused as the other windows refuse it, naming since.
    const backwards = await problem(await app.request(`/v1/event-log?since=${encodeURIComponent(cut)}&until=${encodeURIComponent(all[0]!.created_at)}`, { token }), 400, 'invalid_parameter');
    expect(backwards.errors).to.deep.equal([{ parameter: 'since', message: 'must be before until' }]);
  });

  it('shows a key only the events of resources it can read, and nothing of another workspace', async () => {
    const dealsOnly = await app.addKey(workspaceId, ['read:deals']);
    const seen = await walk('?limit=200', dealsOnly);
    expect(seen.length).to.be.greaterThan(0);
    expect(seen.every((e) => e.type.startsWith('deal.'))).to.equal(true);
    expect(await walk('?limit=200&type=invoice.*', dealsOnly)).to.deep.equal([]);
    const invoiceEvent = (await walk('?limit=200&type=invoice.paid'))[0];
    await problem(await app.request(`/v1/event-log/${invoiceEvent?.id}`, { token: dealsOnly }), 404, 'not_found');
    const nothing = await app.addKey(workspaceId, ['webhooks:manage']);
    expect(await walk('?limit=200', nothing)).to.deep.equal([]);
    // Its cursor is checked all the same.
    await problem(await app.request('/v1/event-log?cursor=bogus', { token: nothing }), 400, 'invalid_cursor');

    const { token: stranger } = await app.workspaceWithKey();
    expect(await walk('?limit=200', stranger)).to.deep.equal([]);
    await problem(await app.request(`/v1/event-log/${invoiceEvent?.id}`, { token: stranger }), 404, 'not_found');
    await problem(await app.request('/v1/event-log/evt_nothing', { token }), 404, 'not_found');
    await problem(await app.request('/v1/event-log/not-an-id', { token }), 404, 'not_found');
  });
});
