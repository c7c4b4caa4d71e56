import { expect } from 'chai';
import { manualClock, startApp, type TestApp } from '../helpers/app.js';
import { failEventInserts } from '../helpers/faults.js';
import { problem } from '../helpers/problem.js';

type Obj = Record<string, unknown> & { id: string };
interface Event {
  id: string;
  type: string;
  created_at: string;
  data: { object: Obj; previous: Record<string, unknown> };
}

describe('events written with each write (the outbox)', () => {
  const clock = manualClock();
  let app: TestApp;
  let token: string;
  let workspaceId: string;
  let seen = 0;

  /** The events written since the last call, in the order they were written. */
  async function newEvents(): Promise<Event[]> {
    const rows = (await app.deps.db('events').where({ workspace_id: workspaceId }).where('seq', '>', seen).orderBy('seq')) as Array<{ seq: number | string; payload: string; type: string; object_id: string; id: string }>;
    if (rows.length > 0) seen = Number(rows[rows.length - 1]?.seq);
    return rows.map((r) => {
      const event = JSON.parse(r.payload) as Event;
      expect(event.id).to.equal(r.id);
      expect(event.type).to.equal(r.type);
      expect(event.data.object.id).to.equal(r.object_id);
      return event;
    });
  }

  async function write(method: string, path: string, json?: unknown): Promise<Response> {
    clock.advance(1000);
    return app.request(path, { token, method, ...(json !== undefined ? { json } : {}) });
  }

  async function created(path: string, json: unknown): Promise<Obj> {
    const res = await write('POST', path, json);
    expect(res.status).to.equal(201);
    return (await res.json()) as Obj;
  }

  before(async () => {
    app = await startApp({ clock });
    ({ token, workspaceId } = await app.workspaceWithKey());
  });
  after(() => app.close());

  beforeEach(async () => {
    await newEvents();
  });

  it('a create emits <r>.created with the object as answered and an empty previous', async () => {
    const client = await created('/v1/clients', { name: 'Acme' });
    const events = await newEvents();
    expect(events).to.have.length(1);
    const [event] = events as [Event];
    expect(event).to.deep.equal({ id: event.id, type: 'client.created', created_at: client.created_at, livemode: true, data: { object: client, previous: {} } });
    expect(event.id).to.match(/^evt_[0-9a-z]{25}$/);
  });

  it('an update emits <r>.updated with previous holding exactly the changed fields', async () => {
    const deal = await created('/v1/deals', { title: 'A', amount: 100, currency: 'EUR' });
    await newEvents();
    const res = await write('PATCH', `/v1/deals/${deal.id}`, { title: 'B', amount: 100, currency: 'USD' });
    const after = (await res.json()) as Obj;
    const events = await newEvents();
    expect(events.map((e) => e.type)).to.deep.equal(['deal.updated']);
    expect(events[0]?.data).to.deep.equal({ object: after, previous: { title: 'A', currency: 'EUR' } });
    expect(events[0]?.created_at).to.equal(after.updated_at);
  });

  it('a delete emits <r>.deleted with the object as it was', async () => {
    const lead = await created('/v1/leads', { name: 'Gone' });
    await newEvents();
    expect((await write('DELETE', `/v1/leads/${lead.id}`)).status).to.equal(204);
    const events = await newEvents();
    expect(events.map((e) => e.type)).to.deep.equal(['lead.deleted']);
    expect(events[0]?.data).to.deep.equal({ object: lead, previous: {} });
  });

  it('a state change emits <r>.updated and its own event, with the same data', async () => {
    const deal = await created('/v1/deals', { title: 'Moves' });
    await newEvents();
    const after = (await (await write('PATCH', `/v1/deals/${deal.id}`, { stage: 'won', title: 'Moved' })).json()) as Obj;
    const events = await newEvents();
    expect(events.map((e) => e.type)).to.deep.equal(['deal.updated', 'deal.stage_changed']);
    for (const e of events) expect(e.data).to.deep.equal({ object: after, previous: { stage: 'lead', title: 'Moves' } });
    expect(new Set(events.map((e) => e.id)).size).to.equal(2);
  });

  it('lead.scored when a score is set on create or changed, not when it stays', async () => {
    const lead = await created('/v1/leads', { name: 'Scored', score: 40 });
    expect((await newEvents()).map((e) => e.type)).to.deep.equal(['lead.created', 'lead.scored']);
    await write('PATCH', `/v1/leads/${lead.id}`, { name: 'Renamed', score: 40 });
    expect((await newEvents()).map((e) => e.type)).to.deep.equal(['lead.updated']);
    await write('PATCH', `/v1/leads/${lead.id}`, { score: 90 });
    const events = await newEvents();
    expect(events.map((e) => e.type)).to.deep.equal(['lead.updated', 'lead.scored']);
    expect(events[1]?.data.previous).to.deep.equal({ score: 40 });
    const unscored = await created('/v1/leads', { name: 'Unscored' });
    expect((await newEvents()).map((e) => e.type)).to.deep.equal(['lead.created']);
    await write('PATCH', `/v1/leads/${unscored.id}`, { score: 0 });
    expect((await newEvents()).map((e) => e.type)).to.deep.equal(['lead.updated', 'lead.scored']);
  });

  it('proposal.sent, accepted and declined, with the stamp in previous', async () => {
    const p1 = await created('/v1/proposals', { title: 'One' });
    const p2 = await created('/v1/proposals', { title: 'Two' });
    await newEvents();
    const sent = (await (await write('PATCH', `/v1/proposals/${p1.id}`, { status: 'sent' })).json()) as Obj;
    let events = await newEvents();
    expect(events.map((e) => e.type)).to.deep.equal(['proposal.updated', 'proposal.sent']);
    expect(events[1]?.data).to.deep.equal({ object: sent, previous: { status: 'draft', sent_at: null } });
    await write('PATCH', `/v1/proposals/${p1.id}`, { status: 'accepted' });
    events = await newEvents();
    expect(events.map((e) => e.type)).to.deep.equal(['proposal.updated', 'proposal.accepted']);
    expect(events[1]?.data.previous).to.deep.equal({ status: 'sent' });
    await write('PATCH', `/v1/proposals/${p2.id}`, { status: 'sent' });
    await write('PATCH', `/v1/proposals/${p2.id}`, { status: 'declined' });
    expect((await newEvents()).map((e) => e.type)).to.deep.equal(['proposal.updated', 'proposal.sent', 'proposal.updated', 'proposal.declined']);
  });

  it('invoice.opened, paid and voided', async () => {
    const i1 = await created('/v1/invoices', { number: '1' });
    const i2 = await created('/v1/invoices', { number: '2' });
    await newEvents();
    await write('PATCH', `/v1/invoices/${i1.id}`, { status: 'open' });
    const paid = (await (await write('PATCH', `/v1/invoices/${i1.id}`, { status: 'paid' })).json()) as Obj;
    await write('PATCH', `/v1/invoices/${i2.id}`, { status: 'void' });
    const events = await newEvents();
    expect(events.map((e) => e.type)).to.deep.equal(['invoice.updated', 'invoice.opened', 'invoice.updated', 'invoice.paid', 'invoice.updated', 'invoice.voided']);
    expect(events[3]?.data).to.deep.equal({ object: paid, previous: { status: 'open', paid_at: null } });
  });

  it('no event for a refused, invalid or empty write', async () => {
    const invoice = await created('/v1/invoices', { number: 'R' });
    await newEvents();
    await problem(await write('PATCH', `/v1/invoices/${invoice.id}`, { status: 'paid' }), 409, 'invalid_transition');
    await problem(await write('PATCH', `/v1/invoices/${invoice.id}`, { amount: -5 }), 422, 'validation_failed');
    await problem(await write('POST', '/v1/invoices', { number: 'x', client_id: 'client_nobody' }), 422, 'validation_failed');
    await problem(await write('DELETE', '/v1/invoices/invoice_nobody'), 404, 'not_found');
    expect((await write('PATCH', `/v1/invoices/${invoice.id}`, { number: 'R' })).status).to.equal(200);
    expect(await newEvents()).to.deep.equal([]);
  });

  describe('a failure inside the transaction', () => {
    let restore: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await restore?.();
      restore = undefined;
    });

    async function count(table: string): Promise<number> {
      const row = (await app.deps.db(table).where({ workspace_id: workspaceId }).count({ n: '*' }).first()) as { n: number | string };
      return Number(row.n);
    }

    it('leaves neither the row nor its event, on create, update and delete', async () => {
      const deal = await created('/v1/deals', { title: 'Before the fault' });
      await newEvents();
      const deals = await count('deals');
      restore = await failEventInserts(app.deps.db, workspaceId);

      await problem(await write('POST', '/v1/deals', { title: 'Never' }), 500, 'internal_error');
      await problem(await write('PATCH', `/v1/deals/${deal.id}`, { title: 'Never', stage: 'won' }), 500, 'internal_error');
      await problem(await write('DELETE', `/v1/deals/${deal.id}`), 500, 'internal_error');
      const idempotent = await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Never' }, headers: { 'idempotency-key': 'fault-1' } });
      await problem(idempotent, 500, 'internal_error');

      expect(await count('deals')).to.equal(deals);
      expect(await newEvents()).to.deep.equal([]);
      expect(await (await app.request(`/v1/deals/${deal.id}`, { token })).json()).to.deep.equal(deal);
      const keys = (await app.deps.db('idempotency_keys').where({ workspace_id: workspaceId }).count({ n: '*' }).first()) as { n: number | string };
      expect(Number(keys.n)).to.equal(0);

      // The same writes succeed once the fault is gone: the failure was the fault, not the write.
      await restore();
      restore = undefined;
      const retried = await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Never' }, headers: { 'idempotency-key': 'fault-1' } });
      expect(retried.status).to.equal(201);
      expect((await newEvents()).map((e) => e.type)).to.deep.equal(['deal.created']);
    });
  });
});
