import { expect } from 'chai';
import { startApp, type TestApp } from '../helpers/app.js';
import { capturedLog } from '../helpers/log.js';

describe('the access log', () => {
  let app: TestApp;
  const captured = capturedLog('info');
  before(async () => {
    app = await startApp({ log: captured.log });
  });
  after(() => app.close());

  it('writes one line per request, after its answer: id, method, path (without its query), status, time and the key\'s id, never its token', async () => {
    const { token, keyId } = await app.workspaceWithKey();
    const created = await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Logged' }, headers: { 'x-request-id': 'access-log-1' } });
    expect(created.status).to.equal(201);
    const missing = await app.request('/v1/deals/deal_missing?expand=client', { token, headers: { 'x-request-id': 'access-log-2' } });
    expect(missing.status).to.equal(404);
    const lines = captured.lines().filter((l) => l.msg === 'request');
    const first = lines.find((l) => l.request_id === 'access-log-1');
    expect(first).to.include({ method: 'POST', path: '/v1/deals', status: 201, key: keyId, level: 30 });
    expect(first?.ms).to.be.a('number').and.at.least(0);
    expect(Object.keys(first ?? {}).sort()).to.deep.equal(['key', 'level', 'method', 'ms', 'msg', 'path', 'pid', 'request_id', 'status', 'time']);
    expect(lines.find((l) => l.request_id === 'access-log-2')).to.include({ method: 'GET', path: '/v1/deals/deal_missing', status: 404, key: keyId });
    expect(JSON.stringify(captured.lines())).not.to.contain(token);
  });
});
