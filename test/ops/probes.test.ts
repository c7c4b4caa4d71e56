import { expect } from 'chai';
import { migrateLatest } from '../../src/db/migrate.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { backend, isolatedDatabase } from '../helpers/backend.js';
import { startCommitCutter } from '../helpers/db-proxy.js';
import { freePort, startPrivateMariadb, startRedis, startServer } from '../helpers/processes.js';

type Ready = { status: string; failing?: string[]; checks: Record<string, string> };

const probe = async (app: TestApp, path: string, method = 'GET') => {
  const res = await fetch(`${app.url}${path}`, { method });
  return { status: res.status, body: res.status === 405 ? null : ((await res.json()) as Ready), res };
};

describe('probes: GET /livez and /readyz', function () {
  this.timeout(60_000);

  it('answer without a key, outside /v1 and every limit; only GET and HEAD', async () => {
    const app = await startApp({ env: { AUTH_FAILURE_LIMIT: '3' } });
    try {
      const live = await probe(app, '/livez');
      expect(live.status).to.equal(200);
      expect(live.body).to.deep.equal({ status: 'live' });
      expect(live.res.headers.get('cache-control')).to.equal('no-store');
      for (let i = 0; i < 20; i += 1) expect((await probe(app, '/readyz')).status).to.equal(200);
      const ready = await probe(app, '/readyz');
      expect(ready.body?.status).to.equal('ready');
      expect(ready.body?.checks).to.include({ database: 'ok', migrations: 'ok' });
      expect(ready.body?.checks.redis).to.equal(backend().kind !== 'embedded' ? 'ok' : 'not configured');
      const post = await probe(app, '/readyz', 'POST');
      expect(post.status).to.equal(405);
      expect(post.res.headers.get('allow')).to.equal('GET, HEAD');
      // Not under /v1: a key is neither needed nor looked at there.
      expect((await fetch(`${app.url}/v1/livez`)).status).to.equal(401);
    } finally {
      await app.close();
    }
  });

  it('is not ready while a migration is pending, and ready once it is applied', async () => {
    const storage = await isolatedDatabase('probes');
    const app = await startApp({ env: storage.env });
    try {
      const before = await probe(app, '/readyz');
      expect(before.status).to.equal(503);
      expect(before.body).to.deep.include({ status: 'not_ready', failing: ['migrations'] });
      expect(before.body?.checks.database).to.equal('ok');
      await migrateLatest(app.deps.db, app.deps.config.migrationsDirs);
      expect((await probe(app, '/readyz')).status).to.equal(200);
    } finally {
      await app.close();
      await storage.drop();
    }
  });

  it('goes 503 naming Redis while its Redis is stopped, and 200 again on its own when it is back', async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    const app = await startApp({ env: { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: `probes${port}:` } });
    try {
      await waitFor(async () => (await probe(app, '/readyz')).status === 200, 10_000, 'ready with Redis');
      redis.kill('SIGKILL');
      await waitFor(async () => (await probe(app, '/readyz')).status === 503, 10_000, 'not ready without Redis');
      const down = await probe(app, '/readyz');
      expect(down.body).to.deep.include({ failing: ['redis'] });
      expect(down.body?.checks).to.include({ database: 'ok', redis: 'unreachable' });
      expect((await probe(app, '/livez')).status).to.equal(200);
      redis = await startRedis(port);
      await waitFor(async () => (await probe(app, '/readyz')).status === 200, 15_000, 'ready again once Redis is back');
    } finally {
      await app.close();
      redis.kill('SIGKILL');
    }
  });

  it('goes 503 naming the database while the database server cannot be reached, and 200 again when it can', async function () {
    if (backend().kind === 'embedded') this.skip();
    const cutter = await startCommitCutter(backend().env.DATABASE_URL!);
    const app = await startApp({ env: { DATABASE_URL: cutter.url } });
    try {
      expect((await probe(app, '/readyz')).status).to.equal(200);
      cutter.refuse = true;
      cutter.dropAll();
      await waitFor(async () => (await probe(app, '/readyz')).status === 503, 10_000, 'not ready without the database');
      const down = await probe(app, '/readyz');
      expect(down.body?.failing).to.include('database');
      expect(down.body?.checks.database).to.equal('unreachable');
      cutter.refuse = false;
      await waitFor(async () => (await probe(app, '/readyz')).status === 200, 15_000, 'ready again once the database is back');
    } finally {
      await app.close();
      await cutter.close();
    }
  });

  it('goes 503 naming the database while a private mariadbd is stopped, and 200 again when it is started, without restarting the server process', async function () {
    if (backend().kind !== 'mysql') this.skip();
    const mariadb = await startPrivateMariadb();
    if (!mariadb) {
      console.log('      (mariadbd is not installed here: the proxy test above stands for it)');
      this.skip();
    }
    const server = await startServer({ DATABASE_URL: mariadb.url, DEMO: 'false' });
    const readyz = async () => {
      const res = await fetch(`${server.url}/readyz`);
      return { status: res.status, body: (await res.json()) as Ready };
    };
    try {
      expect((await readyz()).status).to.equal(200);
      await mariadb.stop();
      const down = await readyz();
      expect(down.status).to.equal(503);
      expect(down.body).to.deep.include({ status: 'not_ready', failing: ['database'] });
      expect(down.body.checks.database).to.equal('unreachable');
      expect((await fetch(`${server.url}/livez`)).status).to.equal(200);
      await mariadb.start();
      await waitFor(async () => (await readyz()).status === 200, 20_000, 'ready again once mariadbd is back');
      expect(server.child.exitCode).to.equal(null);
    } finally {
      expect(await server.stop()).to.equal(0);
      await mariadb.remove();
    }
  });
});
