import { expect } from 'chai';
import { insertSamples } from '../../src/demo/samples.js';
import { startApp, type TestApp } from '../helpers/app.js';

describe('tenancy', () => {
  let app: TestApp;
  let mine: { token: string; refs: Map<string, string[]> };
  let theirs: { token: string; refs: Map<string, string[]> };

  before(async () => {
    app = await startApp();
    const a = await app.workspaceWithKey();
    const b = await app.workspaceWithKey();
    mine = { token: a.token, refs: await insertSamples(app.deps.db, app.registry, a.workspaceId, 15, { seed: 11 }) };
    theirs = { token: b.token, refs: await insertSamples(app.deps.db, app.registry, b.workspaceId, 15, { seed: 12 }) };
  });
  after(() => app.close());

  it('never lists another workspace’s rows', async () => {
    for (const resource of app.registry.resources) {
      const res = await app.request(`/v1${resource.def.path}?limit=200`, { token: mine.token });
      const ids = ((await res.json()) as { data: Array<{ id: string }> }).data.map((r) => r.id);
      expect(ids).to.have.members(mine.refs.get(resource.def.name) ?? []);
      expect(ids).not.to.include.members((theirs.refs.get(resource.def.name) ?? []).slice(0, 1));
    }
  });

  it('answers another workspace’s id with 404, exactly as an id that does not exist', async () => {
    for (const resource of app.registry.resources) {
      const foreign = theirs.refs.get(resource.def.name)?.[0];
      const res = await app.request(`/v1${resource.def.path}/${foreign}`, { token: mine.token });
      expect(res.status).to.equal(404);
      const body = (await res.json()) as { code: string; detail: string };
      expect(body.code).to.equal('not_found');
      const missing = await app.request(`/v1${resource.def.path}/${resource.def.idPrefix}zzzzzzzz`, { token: mine.token });
      expect(((await missing.json()) as { detail: string }).detail.replace(/\S+\.$/, '')).to.equal(body.detail.replace(/\S+\.$/, ''));
      expect((await app.request(`/v1${resource.def.path}/${foreign}`, { token: theirs.token })).status).to.equal(200);
    }
  });

  it('does not let a filter reach into another workspace', async () => {
    const foreignClient = theirs.refs.get('client')?.[0];
    const res = await app.request(`/v1/deals?client_id=${foreignClient}`, { token: mine.token });
    expect(((await res.json()) as { data: unknown[] }).data).to.deep.equal([]);
  });
});
