import { expect } from 'chai';
import { loadConfig } from '../../src/common/config.js';
import { publicApi } from '../../src/api/public.js';
import { loadRegistry } from '../../src/kernel/registry/registry.js';
import type { Api } from '../../src/http/route.js';
import { pathsOf } from '../../src/openapi/operation.js';
import { ProblemResponses } from '../../src/openapi/problems.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- reading a document built as plain JSON
type Json = Record<string, any>;

describe('route table to OpenAPI', () => {
  const api: Api = {
    base: '/v9',
    title: 'Tiny',
    credentials: 'key',
    routes: [
      { method: 'get', path: '/things', operationId: 'listThings', summary: 'List', tag: 't', access: 'read:things', query: { type: 'object', properties: { limit: { type: 'integer' } } }, success: { status: 200, description: 'A page.' }, errors: ['invalid_parameter'], handle: () => ({}) },
      { method: 'post', path: '/things', operationId: 'createThing', summary: 'Create', tag: 't', access: 'write:things', body: { schema: { type: 'object' }, ref: { $ref: '#/components/schemas/ThingCreate' } }, success: { status: 201, description: 'Made.' }, errors: ['validation_failed'], handle: () => ({}) },
      { method: 'get', path: '/things/{id}', operationId: 'getThing', summary: 'Get', tag: 't', access: 'public', pathParams: { id: { type: 'string' } }, success: { status: 200, description: 'One.' }, errors: ['not_found'], handle: () => ({}) },
    ],
  };

  it('groups routes by path, in the order declared, each with its scope, parameters, body and answers', () => {
    const paths = pathsOf(api, new ProblemResponses()) as Record<string, Record<string, Json>>;
    expect(Object.keys(paths)).to.deep.equal(['/things', '/things/{id}']);
    expect(Object.keys(paths['/things'] ?? {})).to.deep.equal(['get', 'post']);
    const list = paths['/things']?.get as Json;
    expect(list.security).to.deep.equal([{ bearerAuth: ['read:things'] }]);
    // An API of keys takes Api-Version on every operation (docs/reference.md section 19).
    expect(list.parameters.map((p: Json) => p.name ?? p.$ref)).to.deep.equal(['limit', '#/components/parameters/ApiVersion', '#/components/parameters/RequestId']);
    expect(Object.keys(list.responses)).to.include.members(['200', '400', '401', '408', '429', '431', '500', '503']);
    const create = paths['/things']?.post as Json;
    expect(create.requestBody.content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/ThingCreate' });
    expect(Object.keys(create.responses)).to.include.members(['201', '413', '415', '422']);
    const get = paths['/things/{id}']?.get as Json;
    expect(get.security).to.deep.equal([]);
    expect(Object.keys(get.responses)).not.to.include('401');
  });

  it('gives every route of the public API a unique operation id and a path of its base', async () => {
    const routes = publicApi(await loadRegistry(loadConfig({}).pluginsDir)).routes;
    expect(new Set(routes.map((r) => r.operationId)).size).to.equal(routes.length);
    expect(new Set(routes.map((r) => `${r.method} ${r.path}`)).size).to.equal(routes.length);
    for (const r of routes) expect(r.path, r.operationId).to.match(/^\/[a-z]/);
  });
});
