import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import { dispatchBySegment, segmentOf } from '../../src/http/dispatch.js';
import type { AppContext, AppState } from '../../src/http/middleware/context.js';

describe('routes dispatched by their first segment (unit)', () => {
  it('reads the first segment below the base', () => {
    expect(segmentOf('/v1/deals', '/v1')).to.equal('deals');
    expect(segmentOf('/v1/deals/deal_1/won', '/v1')).to.equal('deals');
    expect(segmentOf('/v1/projects{/*rest}', '/v1')).to.equal('projects');
    expect(segmentOf('/v1/', '/v1')).to.equal('');
    expect(segmentOf('/v1', '/v1')).to.equal(undefined);
    expect(segmentOf('/v10/deals', '/v1')).to.equal(undefined);
  });

  it('answers as the whole router would: each route, its parameters, 405 with Allow, OPTIONS, and nothing for another path; a literal path before a template', async () => {
    const router = new Router<AppState, AppContext>({ strict: true, sensitive: true });
    router.get('/v1/deals', (ctx) => void (ctx.body = 'list'));
    router.get('/v1/deals/:id', (ctx) => void (ctx.body = `deal ${ctx.params.id}`));
    router.post('/v1/deals', (ctx) => void (ctx.body = 'created'));
    router.post('/v1/deals/batch', (ctx) => void (ctx.body = 'batch'));
    router.patch('/v1/deals/:id', (ctx) => void (ctx.body = `patched ${ctx.params.id}`));
    router.get('/v1/leads/:id', (ctx) => void (ctx.body = `lead ${ctx.params.id}`));
    router.get('/v1/:any/help', (ctx) => void (ctx.body = `help on ${ctx.params.any}`));
    router.all('/v1/projects{/*rest}', (ctx) => void (ctx.body = 'reserved'));
    const koa = new Koa();
    const dispatch = dispatchBySegment(router, '/v1');
    koa.use((ctx, next) => dispatch(ctx as never, next));
    const server = http.createServer(koa.callback()).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const call = async (method: string, path: string) => {
      const res = await fetch(`${base}${path}`, { method });
      return { status: res.status, allow: res.headers.get('allow'), text: await res.text() };
    };
    try {
      expect(await call('GET', '/v1/deals')).to.include({ status: 200, text: 'list' });
      expect(await call('POST', '/v1/deals')).to.include({ status: 200, text: 'created' });
      expect(await call('GET', '/v1/deals/d%201')).to.include({ status: 200, text: 'deal d 1' });
      expect(await call('GET', '/v1/leads/l1')).to.include({ status: 200, text: 'lead l1' });
      // A route whose first segment is a parameter is met from any segment, known or not.
      expect(await call('GET', '/v1/deals/help')).to.include({ status: 200, text: 'deal help' });
      expect(await call('GET', '/v1/leads/help')).to.include({ status: 200, text: 'lead help' });
      expect(await call('GET', '/v1/other/help')).to.include({ status: 200, text: 'help on other' });
      expect(await call('DELETE', '/v1/projects/a/b')).to.include({ status: 200, text: 'reserved' });
      const refused = await call('DELETE', '/v1/deals');
      expect(refused.status).to.equal(405);
      expect(refused.allow?.split(', ').sort()).to.deep.equal(['GET', 'HEAD', 'POST']);
      expect((await call('OPTIONS', '/v1/leads/l1')).allow?.split(', ').sort()).to.deep.equal(['GET', 'HEAD']);
      expect(await call('GET', '/v1/nothing')).to.include({ status: 404 });
      expect(await call('GET', '/v1/Deals')).to.include({ status: 404 });
      expect(await call('GET', '/elsewhere')).to.include({ status: 404 });
      // A path a route names literally is that route's alone: no template answers it (OpenAPI's order).
      expect(await call('POST', '/v1/deals/batch')).to.include({ status: 200, text: 'batch' });
      for (const method of ['GET', 'HEAD', 'PATCH', 'DELETE']) expect(await call(method, '/v1/deals/batch'), method).to.include({ status: 405, allow: 'POST' });
      expect(await call('OPTIONS', '/v1/deals/batch')).to.include({ status: 200, allow: 'POST' });
      expect(await call('PATCH', '/v1/deals/batch2')).to.include({ status: 200, text: 'patched batch2' });
      expect(await call('PROPFIND', '/v1/deals/batch')).to.include({ status: 501 });
    } finally {
      server.close();
    }
  });
});
