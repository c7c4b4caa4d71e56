import { expect } from 'chai';
import { createCluster } from 'redis';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { admin, startServer, startWorkerProcess, startRedisCluster, type ServerProcess, type WorkerProcess } from '../helpers/processes.js';
import { startReceiver, verified, type Receiver } from '../helpers/receiver.js';

/**
 * REDIS_URL=redis-cluster://...: the service unchanged against a real Redis Cluster of three
 * masters started here. Two server processes and a worker share it: the limiter, the
 * revocation marker, the delivery throttle and the outbox signal all go through the cluster.
 */
describe('Redis Cluster (REDIS_URL=redis-cluster://host:port,...)', function () {
  this.timeout(90_000);
  let cluster: Awaited<ReturnType<typeof startRedisCluster>>;
  let env: Record<string, string>;
  let seeder: TestApp;
  let servers: ServerProcess[] = [];

  before(async () => {
    cluster = await startRedisCluster();
    env = { REDIS_URL: cluster.url, REDIS_PREFIX: `cluster${Date.now().toString(36)}:` };
    seeder = await startApp({ env });
    servers = [await startServer({ ...env, WORKER: 'off', WEBHOOK_ALLOW_PRIVATE: 'true' }), await startServer({ ...env, WORKER: 'off', WEBHOOK_ALLOW_PRIVATE: 'true' })];
  });
  after(async () => {
    for (const server of servers) await server.stop();
    await seeder?.close();
    await cluster?.stop();
  });

  const get = (server: ServerProcess, token: string, path = '/v1/health') => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

  it('is ready on both servers once each has connected to the cluster', async () => {
    for (const server of servers) {
      // Listening comes before the cluster's topology is read: not ready until then.
      await waitFor(async () => (await fetch(`${server.url}/readyz`)).status === 200, 10_000, 'the server to be ready');
      const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { checks: { redis: string } };
      expect(ready.checks.redis).to.equal('ok');
    }
  });

  /** Whether the cluster holds `key` (asked of the cluster itself, not through our code). */
  async function clusterHas(key: string): Promise<boolean> {
    const client = createCluster({ rootNodes: [{ url: `redis://127.0.0.1:${cluster.ports[0]}` }] });
    await client.connect();
    try {
      return (await client.exists(key)) === 1;
    } finally {
      client.destroy();
    }
  }

  it('admits exactly the limit across two server processes', async () => {
    const { token, keyId } = await seeder.workspaceWithKey({ rateLimit: 10 });
    const statuses: number[] = [];
    for (let i = 0; i < 16; i += 1) statuses.push((await get(servers[i % 2]!, token)).status);
    // Limited per process, each would admit 10 (20 in all): one shared window admits 10.
    expect(statuses.filter((s) => s === 200)).to.have.length(10);
    expect(statuses.filter((s) => s === 429)).to.have.length(6);
    expect(statuses.slice(0, 10).every((s) => s === 200)).to.equal(true);
    expect(await clusterHas(`${env.REDIS_PREFIX}rl:{key:${keyId}}`)).to.equal(true);
  });

  it('refuses a revoked key on its next request in both processes (the marker is in the cluster)', async () => {
    const { token, keyId } = await seeder.workspaceWithKey();
    for (const server of servers) expect((await get(server, token)).status).to.equal(200);
    const revoked = await admin(['key', 'revoke', keyId, '--json'], env);
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(JSON.parse(revoked.stdout)).to.include({ propagation: 'marked' });
    for (const server of servers) expect((await get(server, token)).status).to.equal(401);
  });

  describe('deliveries through a worker process on the cluster', () => {
    let worker: WorkerProcess;
    let receiver: Receiver;
    before(async () => {
      receiver = await startReceiver();
      worker = await startWorkerProcess({ ...env, WEBHOOK_ALLOW_PRIVATE: 'true' });
    });
    after(async () => {
      await worker?.stop();
      await receiver?.close();
    });

    it('delivers each event once, signed, at the subscription max_deliveries_per_second (its bucket is in the cluster)', async () => {
      const { token } = await seeder.workspaceWithKey({ scopes: ['write:clients', 'webhooks:manage'] });
      const post = (path: string, body: unknown) => fetch(`${servers[0]!.url}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const created = await post('/webhooks', { url: `${receiver.url}/cluster`, events: ['client.created'], max_deliveries_per_second: 5 });
      expect(created.status).to.equal(201);
      const hook = (await created.json()) as { id: string; secret: string };
      receiver.secrets.set('/cluster', [hook.secret]);
      for (let i = 0; i < 10; i += 1) expect((await post('/clients', { name: `cluster ${i}` })).status).to.equal(201);
      const got = await receiver.waitFor(10, (r) => r.path === '/cluster', 20_000);
      expect(new Set(got.map((r) => verified(hook.secret, r).data.object.name)).size).to.equal(10);
      expect(receiver.rejected).to.deep.equal([]);
      // 5 a second with a burst of 1: ten take at least 1.6 s from the first to the last.
      expect(got[9]!.at - got[0]!.at).to.be.at.least(1500);
      expect(await clusterHas(`${env.REDIS_PREFIX}throttle:${hook.id}`)).to.equal(true);
    });
  });
});
