import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { manualClock, startApp, type TestApp } from '../helpers/app.js';
import { sweepExpiredKeys } from '../../src/kernel/write/idempotency.js';
import { problem } from '../helpers/problem.js';

describe('Idempotency-Key on POST', () => {
  const clock = manualClock();
  let app: TestApp;
  let token: string;
  let workspaceId: string;

  function post(path: string, body: string, key: string, as = token): Promise<Response> {
    return app.request(path, { token: as, method: 'POST', body, headers: { 'content-type': 'application/json', 'idempotency-key': key } });
  }

  async function rows(table: string, where: Record<string, unknown> = {}): Promise<number> {
    const row = (await app.deps.db(table).where({ workspace_id: workspaceId, ...where }).count({ n: '*' }).first()) as { n: number | string };
    return Number(row.n);
  }

  before(async () => {
    app = await startApp({ clock });
    ({ token, workspaceId } = await app.workspaceWithKey());
  });
  after(() => app.close());

  it('replays the first answer, status, body and Location, for the same body; one row, one event', async () => {
    const key = randomUUID();
    const deals = await rows('deals');
    const first = await post('/v1/deals', '{"title":"Once","amount":5,"currency":"EUR"}', key);
    expect(first.status).to.equal(201);
    const firstBody = await first.text();
    const id = (JSON.parse(firstBody) as { id: string }).id;
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    clock.advance(60_000);
    // The same request, keys in another order and spaced differently.
    const again = await post('/v1/deals', '{ "currency": "EUR", "amount": 5, "title": "Once" }', key);
    expect(again.status).to.equal(201);
    expect(await again.text()).to.equal(firstBody);
    expect(again.headers.get('location')).to.equal(`/v1/deals/${id}`);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(await rows('deals')).to.equal(deals + 1);
    expect(await rows('events', { object_id: id })).to.equal(1);
  });

  it('answers 409 idempotency_conflict for the same key with another body, or on another endpoint', async () => {
    const key = randomUUID();
    expect((await post('/v1/deals', '{"title":"First"}', key)).status).to.equal(201);
    const deals = await rows('deals');
    const leads = await rows('leads');
    await problem(await post('/v1/deals', '{"title":"Second"}', key), 409, 'idempotency_conflict');
    // The body is checked first: an invalid one is 422 whatever its key.
    await problem(await post('/v1/leads', '{"title":"First"}', key), 422, 'validation_failed');
    await problem(await post('/v1/leads', '{"name":"First"}', key), 409, 'idempotency_conflict');
    expect(await rows('deals')).to.equal(deals);
    expect(await rows('leads')).to.equal(leads);
  });

  it('keeps keys per workspace: another workspace may use the same key', async () => {
    const key = randomUUID();
    const mine = (await (await post('/v1/deals', '{"title":"Shared key"}', key)).json()) as { id: string };
    const other = await app.workspaceWithKey();
    const theirs = await post('/v1/deals', '{"title":"Shared key"}', key, other.token);
    expect(theirs.status).to.equal(201);
    expect(theirs.headers.get('idempotent-replayed')).to.equal(null);
    expect(((await theirs.json()) as { id: string }).id).to.not.equal(mine.id);
  });

  it('creates one row for 10 concurrent POSTs with one key, and answers all 10 with it', async () => {
    const key = randomUUID();
    const deals = await rows('deals');
    const answers = await Promise.all(Array.from({ length: 10 }, () => post('/v1/deals', '{"title":"Concurrent"}', key)));
    const bodies = await Promise.all(answers.map((r) => r.text()));
    expect(answers.map((r) => r.status)).to.deep.equal(Array(10).fill(201));
    expect(new Set(bodies).size).to.equal(1);
    expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).to.have.length(9);
    expect(await rows('deals')).to.equal(deals + 1);
    const id = (JSON.parse(bodies[0] as string) as { id: string }).id;
    expect(await rows('events', { object_id: id })).to.equal(1);
  });

  it('forgets a key after 24 hours', async () => {
    const key = randomUUID();
    const first = (await (await post('/v1/deals', '{"title":"Day one"}', key)).json()) as { id: string };
    clock.advance(24 * 60 * 60 * 1000 - 1);
    expect(((await (await post('/v1/deals', '{"title":"Day one"}', key)).json()) as { id: string }).id).to.equal(first.id);
    clock.advance(1);
    const later = await post('/v1/deals', '{"title":"Day two"}', key);
    expect(later.status).to.equal(201);
    expect(later.headers.get('idempotent-replayed')).to.equal(null);
    const second = (await later.json()) as { id: string };
    expect(second.id).to.not.equal(first.id);
    // The key now belongs to the second request.
    expect(((await (await post('/v1/deals', '{"title":"Day two"}', key)).json()) as { id: string }).id).to.equal(second.id);
  });

  it('remembers nothing for a refused request, so the corrected request can use the key', async () => {
    const key = randomUUID();
    await problem(await post('/v1/deals', '{"title":""}', key), 422, 'validation_failed');
    await problem(await post('/v1/deals', '{"title":"x","client_id":"client_nobody"}', key), 422, 'validation_failed');
    const fixed = await post('/v1/deals', '{"title":"Fixed"}', key);
    expect(fixed.status).to.equal(201);
    expect(fixed.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('refuses a key that is too long or not visible ASCII with 400', async () => {
    for (const key of ['x'.repeat(256), 'has space', 'naïve']) {
      const res = await app.request('/v1/deals', { token, method: 'POST', json: { title: 'x' }, headers: { 'idempotency-key': key } });
      const body = await problem(res, 400, 'invalid_parameter');
      expect(body.errors).to.deep.equal([{ parameter: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters (a UUID is a good choice)' }]);
    }
    expect(await rows('deals', { title: 'x' })).to.equal(0);
  });
});

describe('expired idempotency keys', () => {
  it('are swept after 24 hours, and only then', async () => {
    const clock = manualClock();
    const app = await startApp({ clock });
    try {
      const { token, workspaceId } = await app.workspaceWithKey();
      const keys = async () => Number(((await app.deps.db('idempotency_keys').where({ workspace_id: workspaceId }).count({ n: '*' }).first()) as { n: number | string }).n);
      await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Old' }, headers: { 'idempotency-key': 'old' } });
      clock.advance(12 * 60 * 60 * 1000);
      await app.request('/v1/deals', { token, method: 'POST', json: { title: 'New' }, headers: { 'idempotency-key': 'new' } });
      expect(await keys()).to.equal(2);
      clock.advance(12 * 60 * 60 * 1000 - 1);
      await sweepExpiredKeys(app.deps.db, clock.now());
      expect(await keys()).to.equal(2);
      clock.advance(1);
      await sweepExpiredKeys(app.deps.db, clock.now());
      expect(await keys()).to.equal(1);
    } finally {
      await app.close();
    }
  });
});
