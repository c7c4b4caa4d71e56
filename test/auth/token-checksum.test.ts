import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { generateToken, hashToken } from '../../src/auth/tokens.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

/** docs/reference.md section 15: tokens end in a checksum; a malformed one costs no I/O. */
describe('token checksums', () => {
  let app: TestApp;
  let token: string;
  let workspaceId: string;
  let statements = 0;
  let redisCalls = 0;

  before(async () => {
    app = await startApp();
    ({ token, workspaceId } = await app.workspaceWithKey({ scopes: ['read:deals'] }));
    app.deps.db.on('query', () => (statements += 1));
    // The hot path's reads (the key lookup among them) run by the driver, beside knex.
    const { reads } = app.deps;
    const all = reads.all;
    reads.all = (sql, values) => ((statements += 1), all(sql, values));
    // Counts every command this process sends to Redis (the calls still go through).
    const client = app.deps.redis?.client as unknown as Record<string, (...args: unknown[]) => unknown> | undefined;
    if (client) {
      for (const method of ['eval', 'evalSha', 'set', 'publish']) {
        const real = client[method]?.bind(client);
        if (real) client[method] = (...args: unknown[]) => ((redisCalls += 1), real(...args));
      }
    }
  });
  after(() => app.close());

  it('gives new keys a token of the checksummed format, which works', async () => {
    expect(token).to.match(/^wsk_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
    expect((await app.request('/v1/deals', { token })).status).to.equal(200);
  });

  it('refuses a mistyped token (401 invalid_token, saying so) without a database statement or a Redis call', async () => {
    const mistyped = token.slice(0, 20) + (token[20] === 'a' ? 'b' : 'a') + token.slice(21);
    // Warm: the path is taken once before counting.
    await app.request('/v1/deals', { token: mistyped });
    statements = 0;
    redisCalls = 0;
    for (let i = 0; i < 40; i++) {
      const body = await problem(await app.request('/v1/deals', { token: mistyped }), 401, 'invalid_token');
      expect(body.detail).to.match(/checksum does not match/);
    }
    const cut = await problem(await app.request('/v1/deals', { token: token.slice(0, -2) }), 401, 'invalid_token');
    expect(cut.detail).to.equal('The token is not a Workspace API key.');
    expect(statements, 'database statements').to.equal(0);
    expect(redisCalls, 'Redis calls').to.equal(0);
    // Nor is it counted as a failed authentication: past the limit of 30 a minute, a real key still answers from this address.
    expect((await app.request('/v1/deals', { token })).status).to.equal(200);
  });

  it('looks up a well-formed unknown token (the counters do count)', async () => {
    statements = 0;
    await problem(await app.request('/v1/deals', { token: generateToken() }), 401, 'invalid_token');
    expect(statements).to.be.greaterThan(0);
    if (app.deps.redis) expect(redisCalls).to.be.greaterThan(0);
  });

  it('still takes a token made before the checksum', async () => {
    const legacy = `wsk_${randomBytes(32).toString('base64url')}`;
    const key = (await app.deps.db('api_keys').where({ workspace_id: workspaceId }).first()) as Record<string, unknown>;
    await app.deps.db('api_keys').insert({ ...key, id: `key_legacy${Date.now().toString(36)}`, name: 'legacy', prefix: legacy.slice(0, 12), token_hash: hashToken(legacy) });
    expect((await app.request('/v1/deals', { token: legacy })).status).to.equal(200);
  });
});
