import { expect } from 'chai';
import { startApp, waitFor } from '../helpers/app.js';
import { backend } from '../helpers/backend.js';
import { run, startServer } from '../helpers/processes.js';

describe('WEB_CONCURRENCY: several server processes on one port', function () {
  this.timeout(60_000);

  it('is refused at start-up without Redis, in one line', async () => {
    const result = await run('src/server.ts', [], { WEB_CONCURRENCY: '2', REDIS_URL: '', PORT: '0' });
    expect(result.code).to.equal(1);
    expect(result.stderr.trim().split('\n'), result.stderr).to.have.length(1);
    expect(result.stderr).to.contain('WEB_CONCURRENCY: needs REDIS_URL');
  });

  it('serves from two processes that share one rate limit, and stops both on SIGTERM', async function () {
    if (backend().kind === 'embedded') this.skip();
    const seeder = await startApp();
    const { token } = await seeder.workspaceWithKey({ rateLimit: 10 });
    await seeder.close();
    const server = await startServer({ WEB_CONCURRENCY: '2', WORKER: 'off' });
    try {
      await waitFor(() => (server.stdout().match(/"msg":"listening"/g) ?? []).length === 2, 20_000, 'both processes to listen');
      const statuses: number[] = [];
      for (let i = 0; i < 20; i += 1) statuses.push((await fetch(`${server.url}/v1/health`, { headers: { authorization: `Bearer ${token}` } })).status);
      // One limit of 10 a minute for the key, whichever process answers.
      expect(statuses.filter((s) => s === 200)).to.have.length(10);
      expect(statuses.filter((s) => s === 429)).to.have.length(10);
      const pids = new Set([...server.stdout().matchAll(/"pid":(\d+),[^\n]*"path":"\/v1\/health"/g)].map((m) => m[1]));
      expect(pids.size).to.equal(2);
    } finally {
      expect(await server.stop()).to.equal(0);
    }
    expect((server.stdout().match(/"msg":"stopped"/g) ?? []).length).to.equal(3);
  });
});
