import { expect } from 'chai';
import { startApp, type TestApp } from '../helpers/app.js';
import { backend } from '../helpers/backend.js';
import { startCommitCutter, type CommitCutter } from '../helpers/db-proxy.js';
import { problem } from '../helpers/problem.js';

type Obj = Record<string, unknown> & { id: string };

describe('a write whose connection is lost at COMMIT', () => {
  let cutter: CommitCutter;
  let app: TestApp;
  let token: string;
  let workspaceId: string;

  before(async function () {
    // SQLite has no connection to lose: a failed COMMIT there wrote nothing, and says so.
    if (backend().kind === 'embedded') this.skip();
    cutter = await startCommitCutter(backend().env.DATABASE_URL ?? '');
    app = await startApp({ env: { DATABASE_URL: cutter.url } });
    ({ token, workspaceId } = await app.workspaceWithKey());
  });
  after(async () => {
    await app?.close();
    await cutter?.close();
  });

  const events = async (objectId: string) => Number(((await app.deps.db('events').where({ object_id: objectId }).count({ n: '*' }).first()) as { n: number | string }).n);

  it('answers 201 for a create that was committed: the service made the id, so it checks', async () => {
    cutter.armed = true;
    cutter.at = 'Committed anyway';
    const res = await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Committed anyway' } });
    expect(cutter.cuts).to.equal(1);
    expect(res.status, await res.clone().text()).to.equal(201);
    const deal = (await res.json()) as Obj;
    expect(res.headers.get('location')).to.equal(`/v1/deals/${deal.id}`);
    const stored = (await app.deps.db('deals').where({ id: deal.id, workspace_id: workspaceId })) as Obj[];
    expect(stored).to.have.length(1);
    expect(await events(deal.id)).to.equal(1);
  });

  it('answers 201 with every object for a batch that was committed', async () => {
    const cuts = cutter.cuts;
    cutter.armed = true;
    cutter.at = 'Batch one';
    const res = await app.request('/v1/deals/batch', { token, method: 'POST', json: { data: [{ title: 'Batch one' }, { title: 'Batch two' }, { title: 'Batch three' }] } });
    expect(cutter.cuts).to.equal(cuts + 1);
    expect(res.status, await res.clone().text()).to.equal(201);
    const { data } = (await res.json()) as { data: Obj[] };
    expect(data.map((d) => d.title)).to.deep.equal(['Batch one', 'Batch two', 'Batch three']);
    for (const deal of data) {
      expect(await (await app.request(`/v1/deals/${deal.id}`, { token })).json()).to.deep.equal(deal);
      expect(await events(deal.id)).to.equal(1);
    }
  });

  it('says the outcome is unknown when it cannot check, and a retry with the same Idempotency-Key answers the committed create once', async () => {
    // Connections left idle in the pool (as a busy server has) go with the one cut: the check
    // after the lost COMMIT must find the database away, not an idle connection to ask.
    await Promise.all(Array.from({ length: 3 }, () => app.deps.db.raw('SELECT 1')));
    cutter.armed = true;
    cutter.at = 'Unknown outcome';
    cutter.refuse = true;
    const headers = { 'idempotency-key': 'lost-at-commit-1' };
    let first: Response;
    try {
      first = await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Unknown outcome' }, headers });
    } finally {
      cutter.refuse = false;
    }
    const body = await problem(first, 503, 'unavailable');
    expect(first.headers.get('retry-after')).to.equal('5');
    expect(body.detail).to.match(/whether it was made is unknown/).and.match(/same Idempotency-Key is safe/);
    const retry = await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Unknown outcome' }, headers });
    expect(retry.status).to.equal(201);
    expect(retry.headers.get('idempotent-replayed')).to.equal('true');
    const deal = (await retry.json()) as Obj;
    expect(await app.deps.db('deals').where({ workspace_id: workspaceId, title: 'Unknown outcome' }).count({ n: '*' }).first()).to.deep.equal({ n: 1 });
    expect(await events(deal.id)).to.equal(1);
  });

  it('says the outcome is unknown for a PATCH cut at COMMIT, and that repeating it is safe', async () => {
    const deal = (await (await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Before' } })).json()) as Obj;
    const cuts = cutter.cuts;
    cutter.armed = true;
    cutter.at = 'After';
    const body = await problem(await app.request(`/v1/deals/${deal.id}`, { token, method: 'PATCH', json: { title: 'After' } }), 503, 'unavailable');
    expect(body.detail).to.match(/whether it was made is unknown/).and.match(/PATCH or DELETE may simply be repeated/);
    expect(cutter.cuts).to.equal(cuts + 1);
    // It was committed: the object and its event are there.
    expect(((await (await app.request(`/v1/deals/${deal.id}`, { token })).json()) as Obj).title).to.equal('After');
    expect(await events(deal.id)).to.equal(2);
  });
});
