import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Row } from '../../src/kernel/model/define.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

/** docs/reference.md section 14: POST /v1/<path>/batch, all or none. */
describe('batch create', () => {
  let app: TestApp;
  let token: string;
  let workspaceId: string;

  const batch = (path: string, data: unknown[], options: { key?: string; as?: string } = {}) =>
    app.request(`${path}/batch`, { token: options.as ?? token, method: 'POST', json: { data }, ...(options.key ? { headers: { 'Idempotency-Key': options.key } } : {}) });

  async function count(table: string): Promise<number> {
    const row = (await app.deps.db(table).where({ workspace_id: workspaceId }).count({ n: '*' }).first()) as { n: number | string };
    return Number(row.n);
  }

  before(async () => {
    app = await startApp();
    ({ token, workspaceId } = await app.workspaceWithKey({ scopes: ['read:deals', 'write:deals', 'read:clients', 'write:clients', 'read:invoices', 'write:invoices'] }));
  });
  after(() => app.close());

  it('creates every object in the order sent, each with its own created event', async () => {
    const client = (await (await app.request('/v1/clients', { token, method: 'POST', json: { name: 'Acme' } })).json()) as Row;
    const res = await batch('/v1/deals', [{ title: 'one', amount: 100, currency: 'EUR' }, { title: 'two', client_id: client.id }, { title: 'three', stage: 'won' }]);
    expect(res.status, await res.clone().text()).to.equal(201);
    expect(res.headers.get('location')).to.equal(null);
    const { data } = (await res.json()) as { data: Row[] };
    expect(data.map((d) => d.title)).to.deep.equal(['one', 'two', 'three']);
    expect(data.map((d) => d.stage)).to.deep.equal(['lead', 'lead', 'won']);
    for (const deal of data) {
      expect(await (await app.request(`/v1/deals/${String(deal.id)}`, { token })).json()).to.deep.equal(deal);
      const events = (await app.deps.db('events').where({ object_id: deal.id }).select('type', 'payload')) as Array<{ type: string; payload: string }>;
      expect(events.map((e) => e.type)).to.deep.equal(['deal.created']);
      expect((JSON.parse(events[0]!.payload) as { data: { object: Row } }).data.object).to.deep.equal(deal);
    }
  });

  it('creates 100 at once, and refuses 101 or none, writing nothing', async () => {
    const before = { deals: await count('deals'), events: await count('events') };
    const hundred = Array.from({ length: 100 }, (_, i) => ({ title: `bulk ${i}` }));
    const res = await batch('/v1/deals', hundred);
    expect(res.status).to.equal(201);
    expect(((await res.json()) as { data: Row[] }).data.map((d) => d.title)).to.deep.equal(hundred.map((d) => d.title));
    expect(await count('deals')).to.equal(before.deals + 100);
    expect(await count('events')).to.equal(before.events + 100);
    let body = await problem(await batch('/v1/deals', [...hundred, { title: 'one too many' }]), 422, 'validation_failed');
    expect(body.errors).to.deep.equal([{ pointer: '/data', message: 'must hold 1 to 100 items, not 101' }]);
    body = await problem(await batch('/v1/deals', []), 422, 'validation_failed');
    expect(body.errors).to.deep.equal([{ pointer: '/data', message: 'must hold 1 to 100 items, not 0' }]);
    body = await problem(await app.request('/v1/deals/batch', { token, method: 'POST', json: [{ title: 'not wrapped' }] }), 422, 'validation_failed');
    expect(body.detail).to.equal('The body does not match the schema: the body must be a JSON object.');
    body = await problem(await app.request('/v1/deals/batch', { token, method: 'POST', json: { data: [{ title: 'one', stage: 'won' }], dry_run: true } }), 422, 'validation_failed');
    expect(body.errors).to.deep.equal([{ pointer: '/dry_run', message: 'is not part of a batch, whose body is { "data": [...] } and nothing else' }]);
    body = await problem(await batch('/v1/deals', [{ title: 'one', colour: 'red' }]), 422, 'validation_failed');
    expect(body.errors).to.deep.equal([{ pointer: '/data/0/colour', message: 'is not a field this body takes; it takes title, amount, currency, stage, client_id and expected_close_date' }]);
    expect(await count('deals')).to.equal(before.deals + 100);
    expect(await count('events')).to.equal(before.events + 100);
  });

  it('refuses the whole batch for one bad item, naming it: nothing written, no event', async () => {
    const before = { deals: await count('deals'), events: await count('events') };
    const items = Array.from({ length: 60 }, (_, i) => ({ title: `item ${i}` }));
    // Refused by the schema.
    let body = await problem(await batch('/v1/deals', items.map((d, i) => (i === 57 ? { ...d, title: 42 } : d))), 422, 'validation_failed');
    expect(body.errors?.map((e) => e.pointer)).to.deep.equal(['/data/57/title']);
    body = await problem(await batch('/v1/deals', items.map((d, i) => (i === 3 ? { amount: 5 } : d))), 422, 'validation_failed');
    expect(body.errors).to.deep.equal([{ pointer: '/data/3/title', message: 'is required' }]);
    // Refused inside the transaction, after 57 items were written: all rolled back.
    body = await problem(await batch('/v1/deals', items.map((d, i) => (i === 57 ? { ...d, client_id: 'client_000000000000000000000000' } : d))), 422, 'validation_failed');
    expect(body.errors?.map((e) => e.pointer)).to.deep.equal(['/data/57/client_id']);
    expect(body.detail).to.match(/^Item 57: /);
    // An amount without its currency.
    body = await problem(await batch('/v1/deals', items.map((d, i) => (i === 41 ? { ...d, amount: 900 } : d))), 422, 'validation_failed');
    expect(body.errors?.map((e) => e.pointer)).to.deep.equal(['/data/41/currency']);
    expect(body.detail).to.match(/^Item 41: currency is required when amount is set/);
    // Refused by the state machine (an invoice starts as a draft).
    body = await problem(await batch('/v1/invoices', [{ number: 'A-1' }, { number: 'A-2', status: 'paid' }]), 409, 'invalid_transition');
    expect(body.errors?.[0]?.pointer).to.equal('/data/1/status');
    expect(await count('deals')).to.equal(before.deals);
    expect(await count('invoices')).to.equal(0);
    expect(await count('events')).to.equal(before.events);
  });

  it('replays a batch sent again with its Idempotency-Key, and refuses the key for another batch', async () => {
    const key = randomUUID();
    const data = [{ title: 'idem 1' }, { title: 'idem 2' }];
    const first = await batch('/v1/deals', data, { key });
    expect(first.status).to.equal(201);
    const deals = await count('deals');
    const again = await batch('/v1/deals', data, { key });
    expect(again.status).to.equal(201);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(await again.text()).to.equal(await first.text());
    expect(await count('deals')).to.equal(deals);
    await problem(await batch('/v1/deals', [{ title: 'idem 3' }], { key }), 409, 'idempotency_conflict');
    // Concurrent: one batch written, the others replay it.
    const concurrentKey = randomUUID();
    const answers = await Promise.all(Array.from({ length: 5 }, () => batch('/v1/deals', [{ title: 'c1' }, { title: 'c2' }], { key: concurrentKey })));
    expect(answers.map((r) => r.status)).to.deep.equal([201, 201, 201, 201, 201]);
    expect(new Set(await Promise.all(answers.map((r) => r.text()))).size).to.equal(1);
    expect(await count('deals')).to.equal(deals + 2);
  });

  it('needs the write scope, and counts as one request against the rate limit', async () => {
    const reader = await app.addKey(workspaceId, ['read:deals']);
    await problem(await batch('/v1/deals', [{ title: 'no' }], { as: reader }), 403, 'insufficient_scope');
    const { token: limited } = await app.workspaceWithKey({ scopes: ['write:deals'], rateLimit: 10 });
    const res = await batch('/v1/deals', Array.from({ length: 50 }, (_, i) => ({ title: `r${i}` })), { as: limited });
    expect(res.status).to.equal(201);
    expect(res.headers.get('x-ratelimit-remaining')).to.equal('9');
  });

  it('is documented: the operation, its body and its answer', async () => {
    const doc = (await (await app.request('/v1/openapi.json')).json()) as { paths: Record<string, Record<string, { operationId: string }>>; components: { schemas: Record<string, unknown> } };
    expect(doc.paths['/deals/batch']?.post?.operationId).to.equal('createDealsBatch');
    expect(doc.components.schemas).to.include.keys('DealBatchCreate', 'DealBatch');
  });
});
