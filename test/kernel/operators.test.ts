import { expect } from 'chai';
import type { Row } from '../../src/kernel/model/define.js';
import { manualClock, startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

interface Page {
  data: Row[];
  has_more: boolean;
  next_cursor: string | null;
}

const DAY = 24 * 3600 * 1000;

/** docs/reference.md section 14: operators on every list, from the fields' kinds. */
describe('list operators: [gt|gte|lt|lte] and [in]', () => {
  const clock = manualClock(Date.UTC(2026, 5, 1));
  let app: TestApp;
  let token: string;
  const deals: Row[] = [];
  const leads: Row[] = [];
  let acme: Row;
  let initech: Row;
  let paidInvoice: Row;
  let openInvoice: Row;

  async function create(path: string, json: unknown): Promise<Row> {
    const res = await app.request(path, { token, method: 'POST', json });
    expect(res.status, await res.clone().text()).to.equal(201);
    return (await res.json()) as Row;
  }

  async function ids(path: string): Promise<string[]> {
    const res = await app.request(path, { token });
    expect(res.status, `${path}: ${await res.clone().text()}`).to.equal(200);
    return ((await res.json()) as Page).data.map((o) => String(o.id)).sort();
  }

  const idsOf = (rows: Row[]) => rows.map((o) => String(o.id)).sort();

  before(async () => {
    app = await startApp({ clock });
    ({ token } = await app.workspaceWithKey({ scopes: ['read:deals', 'write:deals', 'read:leads', 'write:leads', 'read:clients', 'write:clients', 'read:invoices', 'write:invoices'] }));
    acme = await create('/v1/clients', { name: 'Acme' });
    initech = await create('/v1/clients', { name: 'Initech' });
    const specs = [
      { title: 'zero', amount: 0, currency: 'EUR', stage: 'lead', client_id: acme.id, expected_close_date: '2026-07-01' },
      { title: 'small', amount: 5000, currency: 'EUR', stage: 'qualified', client_id: initech.id, expected_close_date: '2026-12-31' },
      { title: 'mid', amount: 100000, currency: 'EUR', stage: 'negotiation', client_id: acme.id, expected_close_date: '2027-01-01' },
      { title: 'big', amount: 250000, currency: 'EUR', stage: 'won' },
      { title: 'unpriced', stage: 'lost', expected_close_date: '2027-06-30' },
    ];
    for (const spec of specs) {
      deals.push(await create('/v1/deals', spec));
      clock.advance(DAY);
    }
    for (const [i, lead] of [
      { name: 'Ada', email: 'ada@example.com', score: 10 },
      { name: 'Grace', email: 'grace@example.com', score: 50 },
      { name: 'Linus', email: 'Linus@Example.org', score: 90 },
      { name: 'Nobody' },
    ].entries()) {
      leads.push(await create('/v1/leads', lead));
      clock.advance(1000 * (i + 1));
    }
    paidInvoice = await create('/v1/invoices', { number: 'INV-1', client_id: acme.id, amount: 1000, currency: 'EUR' });
    openInvoice = await create('/v1/invoices', { number: 'INV-2', client_id: initech.id, amount: 2000, currency: 'EUR' });
    for (const [invoice, statuses] of [
      [paidInvoice, ['open', 'paid']],
      [openInvoice, ['open']],
    ] as const) {
      for (const status of statuses) {
        clock.advance(DAY);
        const res = await app.request(`/v1/invoices/${String(invoice.id)}`, { token, method: 'PATCH', json: { status } });
        expect(res.status, await res.clone().text()).to.equal(200);
      }
    }
  });
  after(() => app.close());

  it('compares money: gt, gte, lt, lte, combined with AND; a null amount matches none', async () => {
    const [zero, small, mid, big] = deals as [Row, Row, Row, Row, Row];
    expect(await ids('/v1/deals?amount[gte]=100000')).to.deep.equal(idsOf([mid, big]));
    expect(await ids('/v1/deals?amount[gt]=100000')).to.deep.equal(idsOf([big]));
    expect(await ids('/v1/deals?amount[lt]=5000')).to.deep.equal(idsOf([zero]));
    expect(await ids('/v1/deals?amount[lte]=5000')).to.deep.equal(idsOf([zero, small]));
    expect(await ids('/v1/deals?amount[gte]=5000&amount[lte]=100000')).to.deep.equal(idsOf([small, mid]));
    expect(await ids('/v1/deals?amount[gt]=-1')).to.deep.equal(idsOf([zero, small, mid, big]));
  });

  it('compares integers and dates', async () => {
    const [ada, grace, linus] = leads as [Row, Row, Row, Row];
    expect(await ids('/v1/leads?score[gte]=50')).to.deep.equal(idsOf([grace, linus]));
    expect(await ids('/v1/leads?score[lt]=50')).to.deep.equal(idsOf([ada]));
    const [zero, small, mid, , unpriced] = deals as [Row, Row, Row, Row, Row];
    expect(await ids('/v1/deals?expected_close_date[lt]=2027-01-01')).to.deep.equal(idsOf([zero, small]));
    expect(await ids('/v1/deals?expected_close_date[gte]=2027-01-01')).to.deep.equal(idsOf([mid, unpriced]));
    // Deals over 10,000 closing before next year, as section 14 puts it.
    expect(await ids('/v1/deals?amount[gte]=5000&expected_close_date[lt]=2027-01-01')).to.deep.equal(idsOf([small]));
  });

  it('compares datetimes and the timestamps, to the millisecond, with an offset or without', async () => {
    const paidAt = String((await (await app.request(`/v1/invoices/${String(paidInvoice.id)}`, { token })).json() as Row).paid_at);
    expect(await ids(`/v1/invoices?paid_at[gte]=${paidAt}`)).to.deep.equal(idsOf([paidInvoice]));
    expect(await ids(`/v1/invoices?paid_at[gt]=${paidAt}`)).to.deep.equal([]);
    const [, small, mid] = deals as [Row, Row, Row, Row, Row];
    const created = String(small.created_at);
    expect(await ids(`/v1/deals?created_at[gt]=${created}&created_at[lte]=${String(mid.created_at)}`)).to.deep.equal(idsOf([mid]));
    // The same instant written with an offset (+ as %2B in a URL).
    const offset = new Date(Date.parse(created) + 2 * 3600 * 1000).toISOString().replace('Z', '+02:00');
    expect(await ids(`/v1/deals?created_at[lt]=${encodeURIComponent(offset)}`)).to.deep.equal(idsOf([deals[0] as Row]));
    // The invoices changed last; the deals were never updated after their creation.
    expect(await ids(`/v1/invoices?updated_at[gt]=${String(mid.updated_at)}`)).to.deep.equal(idsOf([paidInvoice, openInvoice]));
  });

  it('selects among values with [in]: states, references and email, combined with the rest', async () => {
    const [zero, small, mid, big] = deals as [Row, Row, Row, Row, Row];
    expect(await ids('/v1/deals?stage[in]=won,negotiation')).to.deep.equal(idsOf([mid, big]));
    expect(await ids('/v1/deals?stage[in]=won')).to.deep.equal(idsOf([big]));
    expect(await ids(`/v1/deals?client_id[in]=${String(acme.id)},${String(initech.id)}`)).to.deep.equal(idsOf([zero, small, mid]));
    expect(await ids(`/v1/deals?client_id[in]=${String(acme.id)}&amount[gt]=0`)).to.deep.equal(idsOf([mid]));
    expect(await ids(`/v1/deals?stage[in]=lead,qualified,won&stage=won`)).to.deep.equal(idsOf([big]));
    const [ada, , linus] = leads as [Row, Row, Row, Row];
    expect(await ids('/v1/leads?email[in]=ada@example.com,linus@example.org,nobody@example.net')).to.deep.equal(idsOf([ada, linus]));
    // Emails compare without regard to letter case on every backend (MySQL's collation did, the others did not), and read back as written.
    expect(await ids('/v1/leads?email[in]=ADA@Example.COM')).to.deep.equal(idsOf([ada]));
    expect(linus.email).to.equal('Linus@Example.org');
    expect(await ids('/v1/invoices?status[in]=paid,void')).to.deep.equal(idsOf([paidInvoice]));
  });

  it('walks a filtered list by cursor: every matching row exactly once, in order', async () => {
    const { token: own } = await app.workspaceWithKey({ scopes: ['read:deals', 'write:deals'] });
    const made: Row[] = [];
    for (let i = 0; i < 23; i++) {
      const res = await app.request('/v1/deals', { token: own, method: 'POST', json: { title: `d${i}`, amount: i * 100, stage: i % 2 ? 'won' : 'lost' } });
      made.push((await res.json()) as Row);
      if (i % 3 === 0) clock.advance(1);
    }
    const expected = made.filter((d) => Number(d.amount) >= 500 && d.stage === 'won');
    const seen: Row[] = [];
    let cursor: string | null = null;
    do {
      const res = await app.request(`/v1/deals?amount[gte]=500&stage[in]=won&limit=3${cursor ? `&cursor=${cursor}` : ''}`, { token: own });
      expect(res.status).to.equal(200);
      const page = (await res.json()) as Page;
      seen.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor);
    // Newest first; a millisecond shared by several is ordered by id, descending.
    const order = (a: Row, b: Row) => String(b.created_at).localeCompare(String(a.created_at)) || String(b.id).localeCompare(String(a.id));
    expect(seen.map((d) => d.id)).to.deep.equal([...expected].sort(order).map((d) => d.id));
  });

  it('refuses an operator a field does not offer, naming the field, the operator and those it offers', async () => {
    let body = await problem(await app.request('/v1/deals?title[gt]=a', { token }), 400, 'invalid_parameter');
    const filtered = 'it filters on amount, client_id, created_at, expected_close_date, stage, updated_at';
    expect(body.errors).to.deep.equal([{ parameter: 'title[gt]', message: `this endpoint does not filter on title; ${filtered}` }]);
    body = await problem(await app.request('/v1/deals?nosuch[gte]=1', { token }), 400, 'invalid_parameter');
    expect(body.errors).to.deep.equal([{ parameter: 'nosuch[gte]', message: `this endpoint does not filter on nosuch; ${filtered}` }]);
    body = await problem(await app.request('/v1/event-log?type[in]=deal.created', { token }), 400, 'invalid_parameter');
    expect(body.errors).to.deep.equal([{ parameter: 'type[in]', message: 'type does not offer the operator "in"; type offers type=' }]);
    body = await problem(await app.request('/v1/event-log?object_id[gte]=1', { token }), 400, 'invalid_parameter');
    expect(body.errors).to.deep.equal([{ parameter: 'object_id[gte]', message: 'this endpoint does not filter on object_id; it offers no field[operator] parameters' }]);
    body = await problem(await app.request('/v1/deals?amount[]=1', { token }), 400, 'invalid_parameter');
    expect(body.errors?.[0]?.message).to.equal('amount[] names no operator; amount offers amount[gt], amount[gte], amount[lt], amount[lte]');
    body = await problem(await app.request('/v1/deals?amount[gte][lt]=1', { token }), 400, 'invalid_parameter');
    expect(body.errors).to.deep.equal([{ parameter: 'amount[gte][lt]', message: 'amount takes one operator in brackets, not [gte][lt]; amount offers amount[gt], amount[gte], amount[lt], amount[lte]' }]);
    body = await problem(await app.request('/v1/deals?amount[in]=1,2', { token }), 400, 'invalid_parameter');
    expect(body.errors?.[0]?.message).to.equal('amount does not offer the operator "in"; amount offers amount[gt], amount[gte], amount[lt], amount[lte]');
    body = await problem(await app.request('/v1/deals?stage[gte]=won', { token }), 400, 'invalid_parameter');
    expect(body.errors?.[0]?.message).to.equal('stage does not offer the operator "gte"; stage offers stage=, stage[in]');
    body = await problem(await app.request('/v1/deals?stage[in]=won&stage[in]=lost', { token }), 400, 'invalid_parameter');
    expect(body.errors?.[0]?.message).to.equal('must be a single string: give its values comma-separated in one parameter, such as stage[in]=lead,qualified; stage offers stage=, stage[in]');
    body = await problem(await app.request('/v1/deals?amount[between]=1', { token }), 400, 'invalid_parameter');
    expect(body.errors?.[0]?.parameter).to.equal('amount[between]');
  });

  it('refuses a value of the wrong type, naming the parameter and what the field offers', async () => {
    for (const [query, parameter, says] of [
      ['amount[gte]=abc', 'amount[gte]', 'plain decimal integer'],
      ['amount[gte]=1e5', 'amount[gte]', 'plain decimal integer'],
      ['amount[gte]=1234567890123456', 'amount[gte]', 'plain decimal integer of at most 15 digits'],
      ['score[lt]=', 'score[lt]', 'plain decimal integer'],
      // What a 32-bit column holds, and no more: past it PostgreSQL answered 500 (22003).
      ['score[gt]=2147483648', 'score[gt]', 'plain decimal integer from -2147483648 to 2147483647, such as 1'],
      ['score[lte]=999999999999999', 'score[lte]', 'plain decimal integer from -2147483648 to 2147483647'],
      ['score[gte]=-2147483649', 'score[gte]', 'plain decimal integer from -2147483648 to 2147483647'],
      ['expected_close_date[lt]=2027-13-45', 'expected_close_date[lt]', 'date'],
      ['created_at[gte]=yesterday', 'created_at[gte]', 'RFC 3339'],
      ['amount[gte]=1&amount[gte]=2', 'amount[gte]', ''],
    ] as const) {
      const path = query.startsWith('score') ? `/v1/leads?${query}` : `/v1/deals?${query}`;
      const body = await problem(await app.request(path, { token }), 400, 'invalid_parameter');
      expect(body.errors?.[0]?.parameter, query).to.equal(parameter);
      expect(body.errors?.[0]?.message, query).to.contain(says).and.contain(`${parameter.split('[')[0]} offers`);
    }
  });

  it('takes the whole range of a 32-bit column on an integer field, past its declared bounds (a lead\'s score is 0-100)', async () => {
    for (const query of ['score[gt]=2147483647', 'score[lt]=-2147483648', 'score[gte]=101']) expect(await ids(`/v1/leads?${query}`), query).to.deep.equal([]);
    expect((await ids('/v1/leads?score[lte]=2147483647')).length).to.be.greaterThan(0);
  });

  it('refuses an [in] list that is empty, too long, or holds a value the field cannot have', async () => {
    const fifty = Array.from({ length: 50 }, () => 'won').join(',');
    expect(await ids(`/v1/deals?stage[in]=${fifty}`)).to.have.length(1);
    let body = await problem(await app.request(`/v1/deals?stage[in]=${fifty},won`, { token }), 400, 'invalid_parameter');
    expect(body.errors).to.deep.equal([{ parameter: 'stage[in]', message: 'takes at most 50 values, not 51' }]);
    body = await problem(await app.request('/v1/deals?stage[in]=won,bogus', { token }), 400, 'invalid_parameter');
    expect(body.errors?.[0]?.message).to.equal('has "bogus", not one of lead, qualified, proposal, negotiation, won, lost');
    body = await problem(await app.request('/v1/deals?stage[in]=won,,lost', { token }), 400, 'invalid_parameter');
    expect(body.errors?.[0]?.message).to.equal('has an empty value');
    body = await problem(await app.request('/v1/deals?client_id[in]=deal_abc', { token }), 400, 'invalid_parameter');
    expect(body.errors?.[0]?.message).to.contain('does not match ^client_');
    body = await problem(await app.request('/v1/deals?stage[in]=', { token }), 400, 'invalid_parameter');
    expect(body.errors?.[0]?.message).to.equal('must not be empty; stage offers stage=, stage[in]');
  });

  it('describes every operator in the OpenAPI document', async () => {
    const doc = (await (await app.request('/v1/openapi.json')).json()) as { paths: Record<string, { get: { parameters: Array<{ name: string; in: string; schema: Record<string, unknown> }> } }> };
    const parameters = new Map(doc.paths['/deals']?.get.parameters.map((p) => [p.name, p]));
    for (const name of ['amount[gt]', 'amount[gte]', 'amount[lt]', 'amount[lte]', 'expected_close_date[lt]', 'created_at[gte]', 'updated_at[lte]', 'stage[in]', 'client_id[in]']) {
      expect(parameters.get(name)?.in, name).to.equal('query');
    }
    expect(parameters.get('amount[gte]')?.schema.type).to.equal('integer');
    expect(parameters.get('expected_close_date[lt]')?.schema.format).to.equal('date');
    expect(parameters.get('created_at[gte]')?.schema.format).to.equal('date-time');
    expect(parameters.has('title[in]'), 'a text field not declared filterable').to.equal(false);
    const leadParameters = new Set(doc.paths['/leads']?.get.parameters.map((p) => p.name));
    expect(leadParameters.has('email[in]')).to.equal(true);
    expect(leadParameters.has('score[gte]')).to.equal(true);
  });
});
