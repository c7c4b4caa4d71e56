import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ROOT_DIR } from '../../src/common/config.js';
import { waitFor } from '../helpers/app.js';
import { backend, isolatedDatabase } from '../helpers/backend.js';
import { holdCheckout } from '../helpers/checkout-lock.js';
import { endOf, freePort, outcomeOf, run, startServer, startWorkerProcess, type RunResult } from '../helpers/processes.js';

/** `npm run build`, as an operator runs it before deploying. */
function npmRunBuild(): Promise<RunResult> {
  return outcomeOf(spawn('npm', ['run', 'build'], { cwd: ROOT_DIR, env: process.env }));
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

/**
 * A command as a process manager runs it, in the install folder (this checkout): a Procfile
 * line through the shell, a unit's ExecStart as its words (systemd runs no shell). A stop
 * sends SIGTERM to the process it started; the exit code is that process's.
 */
function declared(command: string | string[], env: Record<string, string>) {
  const [file, ...args] = typeof command === 'string' ? ['sh', '-c', command] : command;
  const child = spawn(file!, args, { cwd: ROOT_DIR, env: { PATH: process.env.PATH ?? '', ...backend().env, LOG_LEVEL: 'info', ...env } });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (out += d));
  const exited = endOf(child);
  return {
    output: () => out,
    exited,
    async stop(): Promise<number | null> {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The [Service] settings of a systemd unit in deploy/systemd/. */
function unit(name: string): { execStart: string[]; workingDirectory: string } {
  const text = fs.readFileSync(path.join(ROOT_DIR, 'deploy/systemd', name), 'utf8');
  const setting = (key: string) => new RegExp(`^${key}=(.*)$`, 'm').exec(text)?.[1] ?? '';
  return { execStart: setting('ExecStart').split(' '), workingDirectory: setting('WorkingDirectory') };
}

describe('the compiled build (npm run build, then node dist/...)', function () {
  this.timeout(180_000);
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  let env: Record<string, string>;
  let letGo: (() => void) | undefined;

  before(async function () {
    // dist/ is the checkout's own: another backend's suite, run beside this one, must not
    // build it again while this one runs from it (the wait counts against this hook alone).
    this.timeout(600_000);
    letGo = await holdCheckout('dist');
    const built = await npmRunBuild();
    expect(built.code, built.stderr).to.equal(0);
    database = await isolatedDatabase('compiled');
    env = { ...database.env, DEMO: 'false' };
  });
  after(async () => {
    letGo?.();
    await database?.drop();
  });

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
      await waitFor(() => /draining in-flight requests/.test(server.stdout()), 10_000, 'the server to begin draining');
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

  describe('deploying it as the README says (deploy/systemd, Procfile)', () => {
    it('has systemd units that systemd-analyze accepts, and whose commands, run in the install folder, migrate, serve and deliver, each stopping with 0 on SIGTERM', async function () {
      const analyze = spawnSync('systemd-analyze', ['verify', ...fs.readdirSync(path.join(ROOT_DIR, 'deploy/systemd')).filter((f) => f.endsWith('.service')).map((f) => path.join(ROOT_DIR, 'deploy/systemd', f))], { encoding: 'utf8' });
      if (analyze.error) console.log('      (systemd-analyze is not installed: the units are run, not verified)');
      else expect(analyze.status, analyze.stderr).to.equal(0);

      const units = ['workspace-api-migrate.service', 'workspace-api.service', 'workspace-api-worker@.service'].map(unit);
      for (const u of units) {
        expect(u.workingDirectory).to.equal('/opt/workspace-api');
        expect(u.execStart.join(' ')).to.match(/^\/usr\/bin\/node dist\/src\/[a-z/]+\.js$/);
      }
      const [migrateUnit, serverUnit, workerUnit] = units;
      const port = await freePort();
      const migrated = declared(migrateUnit!.execStart, env);
      expect(await migrated.exited, migrated.output()).to.equal(0);
      const server = declared(serverUnit!.execStart, { ...env, PORT: String(port), WORKER: 'off' });
      const worker = declared(workerUnit!.execStart, env);
      try {
        await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200, 20_000, 'the server unit to be ready');
        await waitFor(() => worker.output().includes('"msg":"delivery worker started"'), 20_000, 'the worker unit to start');
      } finally {
        expect(await server.stop(), server.output()).to.equal(0);
        expect(await worker.stop(), worker.output()).to.equal(0);
      }
    });

    it('has a Procfile whose release, web and worker processes work as written', async () => {
      const processes = Object.fromEntries(
        fs
          .readFileSync(path.join(ROOT_DIR, 'Procfile'), 'utf8')
          .split('\n')
          .filter((line) => line.trim())
          .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
      );
      expect(Object.keys(processes)).to.deep.equal(['release', 'web', 'worker']);
      const release = declared(processes.release!, env);
      expect(await release.exited, release.output()).to.equal(0);
      const port = await freePort();
      // A platform gives the web process its PORT; the Procfile makes it listen on every address.
      const web = declared(processes.web!, { ...env, PORT: String(port) });
      const worker = declared(processes.worker!, env);
      try {
        await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200, 20_000, 'the web process to be ready');
        expect(web.output()).to.match(/"host":"0\.0\.0\.0"/);
        await waitFor(() => worker.output().includes('"msg":"delivery worker started"'), 20_000, 'the worker process to start');
      } finally {
        expect(await web.stop(), web.output()).to.equal(0);
        expect(await worker.stop(), worker.output()).to.equal(0);
      }
    });
  });
});
