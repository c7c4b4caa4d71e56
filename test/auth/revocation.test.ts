import { expect } from 'chai';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { usesRedis } from '../helpers/backend.js';
import { checkedFetcher } from '../helpers/contract.js';
import { admin, startServer, type ServerProcess } from '../helpers/processes.js';

describe('revoking a key', () => {
  let app: TestApp;
  let other: ServerProcess;
  before(async () => {
    // Usage is written in batches off the request path; a long interval keeps those writes out of the statement count below.
    app = await startApp({ env: { USAGE_FLUSH_SECONDS: '300' } });
    other = await startServer();
  });
  after(async () => {
    await other.stop();
    await app.close();
  });

  it('is refused on its next request by this process and by a second server process', async () => {
    const { token, keyId } = await app.workspaceWithKey();
    const auth = { authorization: `Bearer ${token}` };
    const api = await checkedFetcher(other.url);
    // Both processes have the key in hand (and cached, where there is a cache).
    expect((await app.request('/v1/health', { token })).status).to.equal(200);
    expect((await api('/v1/health', { headers: auth })).status).to.equal(200);

    const revoked = await admin(['key', 'revoke', keyId, '--json']);
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(JSON.parse(revoked.stdout)).to.include({ id: keyId, already: false });

    if (usesRedis() || app.deps.config.database.client === 'sqlite') {
      // With Redis the limiter's script sees the marker; with SQLite the revocation bumped auth_changes, which ends every cached key.
      const mine = await app.request('/v1/health', { token });
      expect(mine.status).to.equal(401);
      expect(((await mine.json()) as { code: string }).code).to.equal('invalid_token');
      expect((await api('/v1/health', { headers: auth })).status).to.equal(401);
    } else {
      await waitFor(async () => (await app.request('/v1/health', { token })).status === 401, 1500, 'revocation within a second');
    }
  });

  it('costs one query per list request while nothing changes: the key is cached (on SQLite until the file changes)', async () => {
    const { token, keyId } = await app.workspaceWithKey();
    // The first lookup records last_used_at, a change to the file: the next one looks again.
    for (let i = 0; i < 2; i++) expect((await app.request('/v1/deals?limit=1', { token })).status).to.equal(200);
    await waitFor(async () => ((await app.deps.db('api_keys').where({ id: keyId }).first('last_used_at')) as { last_used_at: unknown }).last_used_at != null, 5000, 'last_used_at recorded');
    expect((await app.request('/v1/deals?limit=1', { token })).status).to.equal(200);
    // Every statement: those knex runs, and those the list's prepared path hands the driver.
    const statements: string[] = [];
    const listen = (q: { sql: string }) => statements.push(q.sql);
    const { reads } = app.deps;
    const { all, rows } = reads;
    reads.all = (sql, values) => (statements.push(sql), all(sql, values));
    reads.rows = (sql, values, rowOf) => (statements.push(sql), rows(sql, values, rowOf));
    app.deps.db.on('query', listen);
    try {
      for (let i = 0; i < 5; i++) expect((await app.request('/v1/deals?limit=1', { token })).status).to.equal(200);
    } finally {
      app.deps.db.off('query', listen);
      Object.assign(reads, { all, rows });
    }
    expect(statements.filter((s) => s.includes('api_keys'))).to.deep.equal([]);
    expect(statements).to.have.length(5);
    expect(statements.every((s) => /deals/.test(s))).to.equal(true);
  });

  it('narrows a cached key when its workspace moves to a smaller plan: at once on SQLite, within the cache second on MySQL', async () => {
    const { token, workspaceId } = await app.workspaceWithKey({ plan: 'pro', scopes: ['read:deals', 'write:deals'] });
    const post = () => app.request('/v1/deals', { token, method: 'POST', json: { title: 'before and after' } });
    // Warm: the key is looked up and cached, and writes meanwhile do not end the entry.
    for (let i = 0; i < 3; i += 1) expect((await post()).status).to.equal(201);
    const moved = await admin(['workspace', 'set-plan', workspaceId, 'starter']);
    expect(moved.code, moved.stderr).to.equal(0);
    if (app.deps.config.database.client === 'sqlite') expect((await post()).status).to.equal(403);
    else await waitFor(async () => (await post()).status === 403, 1500, 'the plan change within a second');
    expect((await app.request('/v1/deals?limit=1', { token })).status).to.equal(200);
  });

  it('answers revoking twice calmly, and an unknown key with a refusal', async () => {
    const { keyId } = await app.workspaceWithKey();
    expect((await admin(['key', 'revoke', keyId])).code).to.equal(0);
    const again = await admin(['key', 'revoke', keyId]);
    expect(again.code).to.equal(0);
    expect(again.stdout).to.contain('already revoked');
    const unknown = await admin(['key', 'revoke', 'key_nope']);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('unknown key "key_nope"');
  });

  it('exits 0 and says so when Redis cannot be reached: the revocation is committed and servers refuse the key within their cache time', async () => {
    const { token, keyId } = await app.workspaceWithKey();
    expect((await app.request('/v1/health', { token })).status).to.equal(200);
    // Nothing listens on port 1: the command's Redis is down, whatever the servers' is.
    const revoked = await admin(['key', 'revoke', keyId, '--json'], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(JSON.parse(revoked.stdout)).to.include({ id: keyId, already: false, propagation: 'unreachable' });
    expect(revoked.stderr).to.match(/Redis \(REDIS_URL\) could not be reached.*It is committed.*within 1 s/);
    expect(revoked.stderr).not.to.match(/offline|at .*\.ts:/);
    await waitFor(async () => (await app.request('/v1/health', { token })).status === 401, 1500, 'revocation within the key cache time');
  });
});
