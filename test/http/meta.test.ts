import { expect } from 'chai';
import { startApp, type TestApp } from '../helpers/app.js';

const SCOPES = [
  'read:deals', 'write:deals', 'read:leads', 'write:leads', 'read:clients', 'write:clients',
  'read:proposals', 'write:proposals', 'read:invoices', 'write:invoices', 'webhooks:manage',
];

describe('meta endpoints', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('GET /v1/health describes the key, its workspace and its rate limit, and counts like any request', async () => {
    const { token, keyId, workspaceId } = await app.workspaceWithKey({ plan: 'starter', scopes: ['read:deals'], rateLimit: 7 });
    const first = (await (await app.request('/v1/health', { token })).json()) as Record<string, Record<string, unknown>>;
    expect(first.status).to.equal('ok');
    expect(first.key).to.deep.include({ id: keyId, name: 'test key', scopes: ['read:deals'], rate_limit: 7 });
    expect(first.key?.prefix).to.match(/^wsk_[A-Za-z0-9_-]{8}$/);
    expect(first.workspace).to.deep.equal({ id: workspaceId, name: 'test starter', plan: 'starter' });
    expect(first.rate_limit).to.deep.equal({ limit: 7, remaining: 6, reset: 60, window_seconds: 60 });
    const second = (await (await app.request('/v1/health', { token })).json()) as Record<string, Record<string, unknown>>;
    expect(second.rate_limit?.remaining).to.equal(5);
  });

  it('GET /v1/scopes lists the 11 scopes and tells which the key holds', async () => {
    const { token } = await app.workspaceWithKey({ scopes: ['read:deals', 'webhooks:manage'] });
    const body = (await (await app.request('/v1/scopes', { token })).json()) as { data: Array<Record<string, unknown>> };
    expect(body.data.map((s) => s.name)).to.have.members(SCOPES);
    expect(body.data.filter((s) => s.granted).map((s) => s.name)).to.have.members(['read:deals', 'webhooks:manage']);
    expect(body.data.find((s) => s.name === 'write:invoices')).to.deep.include({ resource: 'invoices', access: 'write', granted: false });
  });

  it("GET /v1/events lists exactly the events the plugins declare, then the service's own about subscriptions", async () => {
    const { token } = await app.workspaceWithKey({ scopes: ['read:leads'] });
    const body = (await (await app.request('/v1/events', { token })).json()) as { data: Array<{ name: string; resource: string; description: string }> };
    const expected = ['deal', 'lead', 'client', 'proposal', 'invoice'].flatMap((r) => [`${r}.created`, `${r}.updated`, `${r}.deleted`]);
    expected.push('deal.stage_changed', 'lead.scored', 'proposal.sent', 'proposal.accepted', 'proposal.declined', 'invoice.opened', 'invoice.paid', 'invoice.voided');
    expected.push('webhook.failing', 'webhook.disabled');
    expect(body.data.map((e) => e.name)).to.have.members(expected);
    expect(body.data.find((e) => e.name === 'webhook.failing')).to.deep.include({ resource: 'webhooks' });
    expect(body.data.find((e) => e.name === 'invoice.paid')).to.deep.include({ resource: 'invoices' });
    expect(body.data.every((e) => e.description.length > 0)).to.equal(true);
    // The article by the name: "An invoice", "A deal".
    expect(body.data.find((e) => e.name === 'invoice.created')?.description).to.equal('An invoice was created.');
    expect(body.data.find((e) => e.name === 'deal.deleted')?.description).to.equal('A deal was deleted.');
  });

  it('narrows an old key to what a downgraded plan allows', async () => {
    const { token, workspaceId } = await app.workspaceWithKey({ plan: 'pro', scopes: ['read:deals', 'write:deals'] });
    await app.deps.db('workspaces').update({ plan: 'starter' }).where('id', workspaceId);
    const fresh = await startApp(); // a process with a cold key cache
    try {
      const body = (await (await fresh.request('/v1/scopes', { token })).json()) as { data: Array<{ name: string; granted: boolean }> };
      expect(body.data.filter((s) => s.granted).map((s) => s.name)).to.deep.equal(['read:deals']);
    } finally {
      await fresh.close();
    }
  });
});
