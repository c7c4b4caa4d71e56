import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { createClient } from 'redis';
import { createKey, createWorkspace } from '../../src/auth/keys.js';
import { manualClock, startApp, waitFor, type TestApp } from '../helpers/app.js';
import { checkedFetcher } from '../helpers/contract.js';
import { backend, usesRedis } from '../helpers/backend.js';
import { capturedLog } from '../helpers/log.js';
import { COMMAND_TIMEOUT_MS } from '../../src/db/redis.js';
import { freePort, startRedis, startServer, type ServerProcess } from '../helpers/processes.js';

async function statuses(app: { request: TestApp['request'] }, token: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await app.request('/v1/health', { token })).status);
  return out;
}

describe('the per-key sliding window', () => {
  const clock = manualClock();
  let app: TestApp;
  before(async () => {
    app = await startApp({ clock });
  });
  after(() => app.close());

  it('admits exactly `limit` of `limit + k` requests, counting down X-RateLimit-Remaining', async () => {
    const { token } = await app.workspaceWithKey({ rateLimit: 5 });
    const remaining: string[] = [];
    const codes: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await app.request('/v1/health', { token });
      codes.push(res.status);
      remaining.push(res.headers.get('x-ratelimit-remaining') ?? '');
      expect(res.headers.get('x-ratelimit-limit')).to.equal('5');
      if (res.status === 429) {
        expect(res.headers.get('retry-after')).to.equal('60');
        expect(((await res.json()) as { code: string }).code).to.equal('rate_limited');
      }
    }
    expect(codes).to.deep.equal([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(remaining).to.deep.equal(['4', '3', '2', '1', '0', '0', '0', '0']);
  });

  it('counts every authenticated answer, errors included', async () => {
    const { token } = await app.workspaceWithKey({ rateLimit: 3, scopes: ['read:leads'] });
    expect((await app.request('/v1/nowhere', { token })).status).to.equal(404);
    expect((await app.request('/v1/deals', { token })).status).to.equal(403);
    expect((await app.request('/v1/leads?limit=0', { token })).status).to.equal(400);
    expect((await app.request('/v1/leads', { token })).status).to.equal(429);
  });

  it('admits again once the oldest request leaves the 60 s span, not before', async () => {
    const { token } = await app.workspaceWithKey({ rateLimit: 3 });
    const t0 = clock.now();
    expect(await statuses(app, token, 1)).to.deep.equal([200]);
    clock.set(t0 + 10_000);
    expect(await statuses(app, token, 1)).to.deep.equal([200]);
    clock.set(t0 + 20_000);
    expect(await statuses(app, token, 1)).to.deep.equal([200]);
    clock.set(t0 + 30_000);
    const full = await app.request('/v1/health', { token });
    expect(full.status).to.equal(429);
    expect(full.headers.get('x-ratelimit-reset')).to.equal('30', 'the slot of t0 frees at t0 + 60 s');
    clock.set(t0 + 59_999);
    expect(await statuses(app, token, 1)).to.deep.equal([429]);
    clock.set(t0 + 60_000);
    expect(await statuses(app, token, 2)).to.deep.equal([200, 429], 'one slot freed: one request');
    clock.set(t0 + 70_000);
    const again = await app.request('/v1/health', { token });
    expect(again.status).to.equal(200);
    const health = (await again.json()) as { rate_limit: Record<string, number> };
    expect(health.rate_limit).to.deep.equal({ limit: 3, remaining: 0, reset: 10, window_seconds: 60 });
  });

  it('keeps keys apart: one key at its limit does not slow another', async () => {
    const a = await app.workspaceWithKey({ rateLimit: 1 });
    const b = await app.workspaceWithKey({ rateLimit: 1 });
    expect(await statuses(app, a.token, 2)).to.deep.equal([200, 429]);
    expect(await statuses(app, b.token, 1)).to.deep.equal([200]);
  });
});

describe('two server processes sharing Redis', () => {
  let servers: ServerProcess[] = [];
  before(async function () {
    if (!usesRedis()) return this.skip();
    servers = await Promise.all([startServer(), startServer()]);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  it('admit exactly `limit` requests of one key together', async () => {
    const app = await startApp();
    try {
      const { token } = await app.workspaceWithKey({ rateLimit: 10 });
      const apis = await Promise.all(servers.map((server) => checkedFetcher(server.url)));
      const requests = Array.from({ length: 30 }, (_, i) => apis[i % 2]!('/v1/health', { headers: { authorization: `Bearer ${token}` } }));
      const codes = (await Promise.all(requests)).map((r) => r.status);
      expect(codes.filter((c) => c === 200)).to.have.length(10);
      expect(codes.filter((c) => c === 429)).to.have.length(20);
    } finally {
      await app.close();
    }
  });
});

describe('Redis stopping mid-run', () => {
  let redis: ChildProcess | undefined;
  let app: TestApp | undefined;
  let port: number;
  const captured = capturedLog();

  before(async () => {
    port = await freePort();
    redis = await startRedis(port);
    // A Redis of this test's own, so stopping it disturbs nothing else.
    app = await startApp({ env: { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: 'outage:' }, log: captured.log });
  });
  after(async () => {
    redis?.kill('SIGKILL');
    await app?.close();
  });

  it('keeps serving, limits per process while Redis is away, logs it, and returns to Redis when it is back', async () => {
    if (!app) throw new Error('no app');
    const ws = await createWorkspace(app.deps.db, { name: 'outage', plan: 'pro' });
    const catalog = ['read:deals'];
    const key = await createKey(app.deps.db, catalog, { workspace: ws.id, name: 'k', scopes: catalog, rate_limit: 4 });
    expect(await statuses(app, key.token, 2)).to.deep.equal([200, 200]);

    redis?.kill('SIGKILL');
    await waitFor(() => !app?.deps.redis?.isReady(), 5000, 'the client to notice');
    // The in-process window starts empty: 4 more admitted, then 429. Every request is answered.
    expect(await statuses(app, key.token, 6)).to.deep.equal([200, 200, 200, 200, 429, 429]);
    expect(captured.lines().some((l) => String(l.msg).includes('Redis is unreachable; limiting per process'))).to.equal(true);

    redis = await startRedis(port);
    await waitFor(() => app?.deps.redis?.isReady() ?? false, 10_000, 'the client to reconnect');
    // A fresh Redis (it kept nothing) holds a fresh window: shared limiting is back.
    expect(await statuses(app, key.token, 5)).to.deep.equal([200, 200, 200, 200, 429]);
    expect(captured.lines().some((l) => String(l.msg).includes('Redis is reachable again'))).to.equal(true);
  });
});

describe('Redis that stops answering (connected, silent)', () => {
  let redis: ChildProcess | undefined;
  let app: TestApp | undefined;
  const captured = capturedLog();

  let port: number;
  /** How many rate-limit scripts this Redis has run (EVAL and EVALSHA), from its own counters. */
  async function scriptsRun(): Promise<number> {
    const probe = createClient({ url: `redis://127.0.0.1:${port}` });
    await probe.connect();
    try {
      const stats = String(await probe.sendCommand(['INFO', 'commandstats']));
      return [...stats.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    } finally {
      probe.destroy();
    }
  }

  before(async () => {
    port = await freePort();
    redis = await startRedis(port);
    app = await startApp({ env: { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: 'stalled:' }, log: captured.log });
  });
  after(async () => {
    redis?.kill('SIGCONT');
    redis?.kill('SIGKILL');
    await app?.close();
  });

  it('holds a request only until the command deadline, answers it from memory, sends nothing more while Redis is silent, and uses Redis again once it answers', async function () {
    this.timeout(40_000);
    if (!app) throw new Error('no app');
    const ws = await createWorkspace(app.deps.db, { name: 'stalled', plan: 'pro' });
    const catalog = ['read:deals'];
    const key = await createKey(app.deps.db, catalog, { workspace: ws.id, name: 'k', scopes: catalog, rate_limit: 100 });
    expect(await statuses(app, key.token, 1)).to.deep.equal([200]);
    const ran = await scriptsRun();

    // Stopped, the server keeps its connections open and answers nothing: the client stays ready.
    // Every request below is answered while it is still stopped (else the test times out).
    redis?.kill('SIGSTOP');
    const started = Date.now();
    const answer = await app.request('/v1/health', { token: key.token });
    expect(answer.status).to.equal(200);
    // It waited for Redis (at least the deadline), and was then answered from memory.
    expect(Date.now() - started).to.be.at.least(COMMAND_TIMEOUT_MS - 50);
    expect(captured.lines().some((l) => String(l.msg).includes('Redis is unreachable; limiting per process'))).to.equal(true);
    // The connection is up, but Redis is known to be silent: the next requests do not send it anything.
    expect(app.deps.redis?.isReady()).to.equal(false);
    expect(await statuses(app, key.token, 2)).to.deep.equal([200, 200]);

    redis?.kill('SIGCONT');
    // Its late answer to the abandoned command says it is back; the next commands get answers of their own.
    await waitFor(() => app?.deps.redis?.isReady() ?? false, 10_000, 'Redis to answer again');
    // Redis ran the one abandoned script, and nothing of the two requests after it.
    expect(await scriptsRun()).to.equal(ran + 1);
    expect(await statuses(app, key.token, 3)).to.deep.equal([200, 200, 200]);
    expect(await scriptsRun()).to.equal(ran + 4);
    expect(captured.lines().some((l) => String(l.msg).includes('Redis is reachable again'))).to.equal(true);
  });
});

describe('backend of this run', () => {
  it('is the one the environment asked for', () => {
    const url = process.env.DATABASE_URL ?? '';
    expect(backend().kind).to.equal(url.startsWith('mysql:') ? 'mysql' : url.startsWith('postgres') ? 'postgres' : 'embedded');
  });
});
