import { expect } from 'chai';
import { manualClock, startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

type Obj = Record<string, unknown> & { id: string };

/** The machines as docs/reference.md section 6 states them, written out here rather than read from the plugins. */
const MACHINES = {
  invoices: {
    field: 'status',
    stamp: { state: 'paid', field: 'paid_at' },
    allowed: { draft: ['open', 'void'], open: ['paid', 'void'], paid: [], void: [] } as Record<string, string[]>,
    // How to reach each state from a new object.
    path: { draft: [], open: ['open'], paid: ['open', 'paid'], void: ['void'] } as Record<string, string[]>,
    body: { number: 'INV-7' },
  },
  proposals: {
    field: 'status',
    stamp: { state: 'sent', field: 'sent_at' },
    allowed: { draft: ['sent'], sent: ['accepted', 'declined'], accepted: [], declined: [] } as Record<string, string[]>,
    path: { draft: [], sent: ['sent'], accepted: ['sent', 'accepted'], declined: ['sent', 'declined'] } as Record<string, string[]>,
    body: { title: 'Offer' },
  },
};

describe('state machines', () => {
  const clock = manualClock();
  let app: TestApp;
  let token: string;
  let workspaceId: string;

  async function patch(path: string, json: unknown): Promise<Response> {
    clock.advance(1000);
    return app.request(path, { token, method: 'PATCH', json });
  }

  async function eventCount(objectId: string): Promise<number> {
    const row = (await app.deps.db('events').where({ workspace_id: workspaceId, object_id: objectId }).count({ n: '*' }).first()) as { n: number | string };
    return Number(row.n);
  }

  before(async () => {
    app = await startApp({ clock });
    ({ token, workspaceId } = await app.workspaceWithKey());
  });
  after(() => app.close());

  for (const [resource, machine] of Object.entries(MACHINES)) {
    const states = Object.keys(machine.allowed);
    describe(resource, () => {
      async function inState(state: string): Promise<Obj> {
        const res = await app.request(`/v1/${resource}`, { token, method: 'POST', json: machine.body });
        let object = (await res.json()) as Obj;
        for (const step of machine.path[state] ?? []) {
          const moved = await patch(`/v1/${resource}/${object.id}`, { [machine.field]: step });
          expect(moved.status).to.equal(200);
          object = (await moved.json()) as Obj;
        }
        expect(object[machine.field]).to.equal(state);
        return object;
      }

      for (const from of states) {
        for (const to of states) {
          if (from === to) continue;
          const allowed = machine.allowed[from]?.includes(to) ?? false;
          it(`${allowed ? 'allows' : 'refuses'} ${from} -> ${to}`, async () => {
            const object = await inState(from);
            const events = await eventCount(object.id);
            const res = await patch(`/v1/${resource}/${object.id}`, { [machine.field]: to });
            if (allowed) {
              expect(res.status).to.equal(200);
              const after = (await res.json()) as Obj;
              expect(after[machine.field]).to.equal(to);
              if (to === machine.stamp.state) expect(after[machine.stamp.field]).to.equal(new Date(clock.now()).toISOString());
              else expect(after[machine.stamp.field]).to.equal(object[machine.stamp.field]);
              expect(await eventCount(object.id)).to.be.greaterThan(events);
            } else {
              const body = await problem(res, 409, 'invalid_transition');
              const targets = machine.allowed[from] ?? [];
              for (const target of targets) expect(body.detail).to.contain(target);
              if (targets.length === 0) expect(body.detail).to.contain('final');
              expect(body.errors).to.deep.equal([{ pointer: `/${machine.field}`, message: targets.length > 0 ? `allowed: ${targets.join(', ')}` : 'no move is allowed' }]);
              expect(await (await app.request(`/v1/${resource}/${object.id}`, { token })).json()).to.deep.equal(object);
              expect(await eventCount(object.id)).to.equal(events);
            }
          });
        }
      }

      it('starts in the initial state; naming it on create is fine, naming another is 409', async () => {
        const initial = states[0] as string;
        const plain = (await (await app.request(`/v1/${resource}`, { token, method: 'POST', json: machine.body })).json()) as Obj;
        expect(plain[machine.field]).to.equal(initial);
        const named = await app.request(`/v1/${resource}`, { token, method: 'POST', json: { ...machine.body, [machine.field]: initial } });
        expect(named.status).to.equal(201);
        for (const other of states.slice(1)) {
          const body = await problem(await app.request(`/v1/${resource}`, { token, method: 'POST', json: { ...machine.body, [machine.field]: other } }), 409, 'invalid_transition');
          expect(body.detail).to.contain(initial);
        }
      });

      it('keeps the stamp once set, and lets the client set it never', async () => {
        const stamped = await inState(machine.stamp.state);
        expect(stamped[machine.stamp.field]).to.be.a('string');
        const next = machine.allowed[machine.stamp.state]?.[0];
        if (next) {
          const moved = (await (await patch(`/v1/${resource}/${stamped.id}`, { [machine.field]: next })).json()) as Obj;
          expect(moved[machine.stamp.field]).to.equal(stamped[machine.stamp.field]);
        }
        await problem(await patch(`/v1/${resource}/${stamped.id}`, { [machine.stamp.field]: null }), 422, 'validation_failed');
      });

      it('lets a final object keep its state while other fields change', async () => {
        const final = states.find((s) => (machine.allowed[s] ?? []).length === 0) as string;
        const object = await inState(final);
        const res = await patch(`/v1/${resource}/${object.id}`, { [machine.field]: final, amount: 42, currency: 'EUR' });
        expect(res.status).to.equal(200);
        expect(((await res.json()) as Obj).amount).to.equal(42);
      });
    });
  }

  describe('free machines', () => {
    it('moves a deal between any two stages', async () => {
      const stages = ['lead', 'qualified', 'proposal', 'negotiation', 'won', 'lost'];
      const deal = (await (await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Free', stage: 'won' } })).json()) as Obj;
      expect(deal.stage).to.equal('won');
      for (const to of ['lead', 'lost', 'qualified', 'won', 'negotiation', 'proposal', 'lead']) {
        expect(stages).to.include(to);
        const res = await patch(`/v1/deals/${deal.id}`, { stage: to });
        expect(res.status).to.equal(200);
        expect(((await res.json()) as Obj).stage).to.equal(to);
      }
    });

    it('moves a lead between any two statuses', async () => {
      const lead = (await (await app.request('/v1/leads', { token, method: 'POST', json: { name: 'Free', status: 'converted' } })).json()) as Obj;
      for (const to of ['new', 'disqualified', 'contacted', 'converted', 'qualified', 'new']) {
        const res = await patch(`/v1/leads/${lead.id}`, { status: to });
        expect(res.status).to.equal(200);
        expect(((await res.json()) as Obj).status).to.equal(to);
      }
    });
  });
});
