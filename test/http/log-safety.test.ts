import net, { type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { hashToken } from '../../src/auth/tokens.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { failWrites } from '../helpers/faults.js';
import { capturedLog } from '../helpers/log.js';
import { problem } from '../helpers/problem.js';
import { newKey } from '../../src/secrets/keyring.js';

type Sub = { id: string; secret: string };

describe('what reaches the log when a statement fails', () => {
  let app: TestApp;
  let token: string;
  const captured = capturedLog();
  before(async () => {
    app = await startApp({ log: captured.log, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    ({ token } = await app.workspaceWithKey());
  });
  after(() => app.close());

  it('logs the code, operation and table of a failed UPDATE or INSERT on webhook_subscriptions, never a secret', async () => {
    const created = (await (await app.request('/v1/webhooks', { token, method: 'POST', json: { url: 'http://127.0.0.1:9/hook', events: ['*'] } })).json()) as Sub;
    const rotated = (await (await app.request(`/v1/webhooks/${created.id}/rotate-secret`, { token, method: 'POST' })).json()) as Sub;
    expect(rotated.secret).to.match(/^whsec_/).and.not.equal(created.secret);

    const restoreUpdate = await failWrites(app.deps.db, 'webhook_subscriptions', 'UPDATE');
    try {
      await problem(await app.request(`/v1/webhooks/${created.id}/rotate-secret`, { token, method: 'POST' }), 500, 'internal_error');
      await problem(await app.request(`/v1/webhooks/${created.id}`, { token, method: 'PATCH', json: { description: 'x' } }), 500, 'internal_error');
    } finally {
      await restoreUpdate();
    }
    const restoreInsert = await failWrites(app.deps.db, 'webhook_subscriptions', 'INSERT');
    try {
      await problem(await app.request('/v1/webhooks', { token, method: 'POST', json: { url: 'http://127.0.0.1:9/hook', events: ['*'] } }), 500, 'internal_error');
    } finally {
      await restoreInsert();
    }

    const failures = captured.lines().filter((l) => l.msg === 'unhandled error');
    expect(failures).to.have.length(3);
    const errs = failures.map((l) => l.err as Record<string, unknown>);
    expect(errs.map((e) => [e.operation, e.table])).to.deep.equal([
      ['update', 'webhook_subscriptions'],
      ['update', 'webhook_subscriptions'],
      ['insert', 'webhook_subscriptions'],
    ]);
    for (const e of errs) expect(e.code).to.be.a('string').that.matches(/^(ER_SIGNAL_EXCEPTION|SQLITE_CONSTRAINT_TRIGGER|P0001)$/);
    const all = JSON.stringify(captured.lines());
    // Neither the secrets nor anything else bound to a statement: no whsec_, no URL.
    expect(all).not.to.contain(created.secret.slice(6));
    expect(all).not.to.contain(rotated.secret.slice(6));
    expect(all).not.to.contain('whsec_');
    expect(all).not.to.contain('127.0.0.1:9');
  });
});

describe('what reaches the log when the database is unreachable', () => {
  let app: TestApp;
  let silent: net.Server;
  const captured = capturedLog();
  before(async () => {
    // A "database" that accepts connections and never answers: the pool gives up waiting, and
    // knex's timeout error carries the statement and its bindings (here, the token's hash).
    silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    app = await startApp({ log: captured.log, env: { DATABASE_URL: `mysql://root@127.0.0.1:${port}/nothing`, SECRET_KEYS: newKey() } });
  });
  after(async () => {
    await app.close().catch(() => undefined);
    silent.close();
  });

  it('logs the code, operation and table, never the token hash the lookup was bound to', async () => {
    const token = `wsk_${'E'.repeat(43)}`;
    await problem(await app.request('/v1/deals', { headers: { authorization: `Bearer ${token}` } }), 503, 'unavailable');
    const line = captured.lines().find((l) => l.msg === 'database unavailable');
    expect(line?.err).to.include({ type: 'KnexTimeoutError' });
    expect(JSON.stringify(captured.lines())).not.to.contain(hashToken(token));
    expect(JSON.stringify(captured.lines())).not.to.contain(token);
  });
});

describe('what reaches the log when the database refuses connections', () => {
  let app: TestApp;
  const captured = capturedLog();
  before(async () => {
    // A port nothing listens on: every connection is refused (ECONNREFUSED), as with MariaDB stopped.
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    app = await startApp({ log: captured.log, env: { DATABASE_URL: `mysql://root@127.0.0.1:${port}/nothing`, SECRET_KEYS: newKey() } });
  });
  after(async () => {
    await app.close().catch(() => undefined);
  });

  it('logs one line with the code and operation: no statement text, no stack', async () => {
    const token = `wsk_${'F'.repeat(43)}`;
    await problem(await app.request('/v1/deals', { headers: { authorization: `Bearer ${token}` } }), 503, 'unavailable');
    const lines = captured.lines().filter((l) => l.msg === 'database unavailable');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ method: 'GET', path: '/v1/deals' });
    const err = lines[0]?.err as Record<string, unknown>;
    expect(err).to.include({ code: 'ECONNREFUSED' });
    expect(Object.keys(err)).to.have.members(['type', 'code', ...(err.errno === undefined ? [] : ['errno']), ...(err.operation === undefined ? [] : ['operation']), ...(err.table === undefined ? [] : ['table'])]);
    const all = JSON.stringify(captured.lines());
    expect(all).not.to.match(/select|stack| {4}at /i);
    expect(all).not.to.contain(hashToken(token));
  });
});
