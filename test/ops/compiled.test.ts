import { expect } from 'chai';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { ROOT_DIR } from '../../src/config.js';
import { isolatedDatabase } from '../helpers/backend.js';
import { run, startServer, startWorkerProcess, type RunResult } from '../helpers/processes.js';

/** `npm run build`, as an operator runs it before deploying. */
function npmRunBuild(): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', 'build'], { cwd: ROOT_DIR, env: process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Sends a POST's headers and half its body over a raw socket and returns a function that
 * sends the rest and resolves with the whole answer: a request the server is in the middle of.
 */
async function halfSentPost(url: string, path: string, token: string, body: string): Promise<() => Promise<string>> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let answer = '';
  socket.on('data', (d: Buffer) => (answer += d));
  const ended = new Promise<string>((resolve) => socket.on('close', () => resolve(answer)));
  const half = Math.floor(body.length / 2);
  socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, half)}`);
  return () => {
    socket.write(body.slice(half));
    return ended;
  };
}

describe('the compiled build (npm run build, then node dist/...)', function () {
  this.timeout(180_000);
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  let env: Record<string, string>;

  before(async () => {
    const built = await npmRunBuild();
    expect(built.code, built.stderr).to.equal(0);
    database = await isolatedDatabase('compiled');
    env = { ...database.env, DEMO: 'false' };
  });
  after(async () => database?.drop());

  it('migrates, creates a key and serves with compiled JavaScript alone; SIGTERM drains a request in flight and exits 0', async () => {
    const migrated = await run('dist/src/cli/migrate.js', [], env);
    expect(migrated.code, migrated.stderr).to.equal(0);
    const ws = await run('dist/src/cli/admin.js', ['workspace', 'create', '--name', 'Compiled', '--plan', 'pro', '--json'], env);
    expect(ws.code, ws.stderr).to.equal(0);
    const key = await run('dist/src/cli/admin.js', ['key', 'create', '--workspace', (JSON.parse(ws.stdout) as { id: string }).id, '--name', 'compiled', '--scopes', 'read:clients,write:clients', '--json'], env);
    expect(key.code, key.stderr).to.equal(0);
    const token = (JSON.parse(key.stdout) as { token: string }).token;

    const server = await startServer(env, 'dist/src/server.js');
    try {
      expect((await fetch(`${server.url}/readyz`)).status).to.equal(200);
      const page = await fetch(`${server.url}/admin/`);
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as { info: { version: string }; paths: Record<string, unknown> };
      expect(doc.paths).to.have.property('/clients');
      expect(doc.info.version).to.match(/^\d+\.\d+\.\d+/);

      const finish = await halfSentPost(server.url, '/v1/clients', token, JSON.stringify({ name: 'Arrived during the drain' }));
      await new Promise((r) => setTimeout(r, 200));
      const stopped = server.stop('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      expect(server.child.exitCode, 'the server waits for the request it is reading').to.equal(null);
      const answer = await finish();
      expect(answer).to.match(/^HTTP\/1\.1 201 /);
      expect(await stopped).to.equal(0);
      expect(server.stdout()).to.match(/"msg":"stopped"/);
    } finally {
      await server.stop('SIGKILL');
    }

    const again = await startServer(env, 'dist/src/server.js');
    try {
      const list = (await (await fetch(`${again.url}/v1/clients`, { headers: { authorization: `Bearer ${token}` } })).json()) as { data: { name: string }[] };
      expect(list.data.map((c) => c.name)).to.deep.equal(['Arrived during the drain']);
    } finally {
      expect(await again.stop()).to.equal(0);
    }
  });

  it('runs the delivery worker compiled: it starts, and SIGTERM stops it with 0', async () => {
    const worker = await startWorkerProcess(env, 'dist/src/worker.js');
    expect(await worker.stop('SIGTERM')).to.equal(0);
    expect(worker.output()).to.match(/"msg":"delivery worker stopped"/);
  });
});
