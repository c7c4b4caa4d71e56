import { expect } from 'chai';
import type { Row } from '../../src/kernel/model/define.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

interface Page {
  data: Row[];
  has_more: boolean;
  next_cursor: string | null;
}

/** docs/reference.md section 14: expand=<reference> on get and list. */
describe('expand', () => {
  let app: TestApp;
  let token: string;
  let workspaceId: string;
  let acme: Row;
  let initech: Row;

  async function create(path: string, json: unknown): Promise<Row> {
    const res = await app.request(path, { token, method: 'POST', json });
    expect(res.status, await res.clone().text()).to.equal(201);
    return (await res.json()) as Row;
  }

  async function read<T>(path: string, as = token): Promise<T> {
    const res = await app.request(path, { token: as });
    expect(res.status, `${path}: ${await res.clone().text()}`).to.equal(200);
    return (await res.json()) as T;
  }

  before(async () => {
    app = await startApp();
    ({ token, workspaceId } = await app.workspaceWithKey({ scopes: ['read:deals', 'write:deals', 'read:clients', 'write:clients', 'read:proposals', 'write:proposals'] }));
    acme = await create('/v1/clients', { name: 'Acme', email: 'ap@acme.example' });
    initech = await create('/v1/clients', { name: 'Initech' });
  });
  after(() => app.close());

  it('adds the referenced object beside its id on get, and null when the id is null', async () => {
    const deal = await create('/v1/deals', { title: 'With a client', client_id: acme.id });
    const expanded = await read<Row>(`/v1/deals/${String(deal.id)}?expand=client`);
    expect(expanded.client).to.deep.equal(acme);
    expect(Object.keys(expanded).indexOf('client')).to.equal(Object.keys(expanded).indexOf('client_id') + 1);
    expect(Object.fromEntries(Object.entries(expanded).filter(([key]) => key !== 'client'))).to.deep.equal(deal);
    // Without expand, nothing is added.
    expect(await read<Row>(`/v1/deals/${String(deal.id)}`)).to.deep.equal(deal);
    const alone = await create('/v1/deals', { title: 'No client' });
    expect((await read<Row>(`/v1/deals/${String(alone.id)}?expand=client`)).client).to.equal(null);
  });

  it('gives null for a reference whose object was deleted', async () => {
    const doomed = await create('/v1/clients', { name: 'Soon gone' });
    const deal = await create('/v1/deals', { title: 'Orphan', client_id: doomed.id });
    expect((await app.request(`/v1/clients/${String(doomed.id)}`, { token, method: 'DELETE' })).status).to.equal(204);
    const expanded = await read<Row>(`/v1/deals/${String(deal.id)}?expand=client`);
    expect(expanded.client_id).to.equal(doomed.id);
    expect(expanded.client).to.equal(null);
  });

  it('expands a whole page, each row with its own object, in one query per expanded field', async () => {
    const { token: own } = await app.workspaceWithKey({ scopes: ['read:deals', 'write:deals', 'read:clients', 'write:clients', 'read:proposals', 'write:proposals'] });
    const post = async (path: string, json: unknown) => (await (await app.request(path, { token: own, method: 'POST', json })).json()) as Row;
    const clients = [await post('/v1/clients', { name: 'One' }), await post('/v1/clients', { name: 'Two' })];
    const deals: Row[] = [];
    for (let i = 0; i < 12; i++) deals.push(await post('/v1/deals', { title: `deal ${i}`, ...(i % 3 === 2 ? {} : { client_id: clients[i % 3]?.id }) }));
    const proposal = await post('/v1/proposals', { title: 'Offer', deal_id: deals[0]?.id, client_id: clients[0]?.id });

    const queries: string[] = [];
    const listen = (q: { sql: string }) => queries.push(q.sql);
    app.deps.db.on('query', listen);
    let page: Page;
    try {
      page = await read<Page>('/v1/deals?expand=client&limit=10', own);
    } finally {
      app.deps.db.off('query', listen);
    }
    expect(page.data).to.have.length(10);
    for (const deal of page.data) {
      const client = clients.find((c) => c.id === deal.client_id) ?? null;
      expect(deal.client, String(deal.title)).to.deep.equal(client);
    }
    // The page's clients come in one statement, whatever the number of rows.
    expect(queries.filter((sql) => /from [`"]?clients[`"]?/i.test(sql))).to.have.length(1);

    // Several names, and each expanded object is the plain object (not expanded itself).
    const expanded = await read<Row>(`/v1/proposals/${String(proposal.id)}?expand=deal,client`, own);
    expect((expanded.deal as Row).id).to.equal(deals[0]?.id);
    expect(expanded.deal).to.not.have.property('client');
    expect(expanded.client).to.deep.equal(clients[0]);
    // Walking by cursor keeps the expansion on every page.
    const second = await read<Page>(`/v1/deals?expand=client&limit=10&cursor=${String(page.next_cursor)}`, own);
    expect(second.data.map((d) => d.id)).to.deep.equal(deals.slice(0, 2).reverse().map((d) => d.id));
    expect(second.data.every((d) => 'client' in d)).to.equal(true);
  });

  it('needs the read scope of the expanded resource: 403 naming it, and nothing else read', async () => {
    const narrow = await app.addKey(workspaceId, ['read:deals']);
    const deal = await create('/v1/deals', { title: 'Scoped', client_id: initech.id });
    const body = await problem(await app.request(`/v1/deals/${String(deal.id)}?expand=client`, { token: narrow }), 403, 'insufficient_scope');
    expect(body.detail).to.contain('read:clients');
    await problem(await app.request('/v1/deals?expand=client', { token: narrow }), 403, 'insufficient_scope');
    expect((await app.request(`/v1/deals/${String(deal.id)}`, { token: narrow })).status).to.equal(200);
  });

  it('refuses a name the resource cannot expand, saying what it can', async () => {
    let body = await problem(await app.request('/v1/deals?expand=owner', { token }), 400, 'invalid_parameter');
    expect(body.errors).to.deep.equal([{ parameter: 'expand', message: 'cannot expand "owner"; deal expands client' }]);
    body = await problem(await app.request('/v1/deals?expand=client_id', { token }), 400, 'invalid_parameter');
    expect(body.errors?.[0]?.message).to.contain('cannot expand "client_id"');
    await problem(await app.request('/v1/deals?expand=', { token }), 400, 'invalid_parameter');
    // Lists written as other APIs write them (Stripe's expand[]) are told how to write them here.
    const written = 'give its values comma-separated in one parameter, such as expand=client';
    body = await problem(await app.request('/v1/deals?expand[]=client', { token }), 400, 'invalid_parameter');
    expect(body.errors).to.deep.equal([{ parameter: 'expand[]', message: `is not how expand is written: ${written}` }]);
    body = await problem(await app.request('/v1/deals?expand=client&expand=client', { token }), 400, 'invalid_parameter');
    expect(body.errors).to.deep.equal([{ parameter: 'expand', message: `must be a single string: ${written}` }]);
    // A resource without references takes no expand at all.
    body = await problem(await app.request(`/v1/clients/${String(acme.id)}?expand=deal`, { token }), 400, 'invalid_parameter');
    expect(body.errors?.[0]?.parameter).to.equal('expand');
  });

  it('documents expand on get and list, and the expanded object in the schema', async () => {
    const doc = (await (await app.request('/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, { parameters: Array<{ name: string }> }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    expect(doc.paths['/deals']?.get?.parameters.map((p) => p.name)).to.include('expand');
    expect(doc.paths['/deals/{id}']?.get?.parameters.map((p) => p.name)).to.include('expand');
    expect(doc.paths['/clients/{id}']?.get?.parameters.map((p) => p.name)).to.not.include('expand');
    expect(doc.components.schemas.Deal?.properties.client).to.deep.include({ anyOf: [{ $ref: '#/components/schemas/Client' }, { type: 'null' }] });
    expect(doc.components.schemas.Proposal?.properties).to.include.keys('deal', 'client');
  });
});
