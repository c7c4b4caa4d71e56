import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT_DIR } from '../../src/common/config.js';
import { waitFor } from './app.js';
import { backend, isolatedDatabase } from './backend.js';

const TSX = ['--import', 'tsx'];

/** Node's arguments for an entry point: TypeScript through tsx, compiled JavaScript (dist/) as it is. */
const nodeArgs = (script: string) => [...(script.endsWith('.ts') ? TSX : []), path.join(ROOT_DIR, script)];

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript entry point of ours as its own process, on this run's backend. */
export function run(script: string, args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  return outcomeOf(spawn(process.execPath, [...nodeArgs(script), ...args], { cwd: ROOT_DIR, env: { PATH: process.env.PATH ?? '', ...backend().env, ...env } }));
}

/**
 * A process's exit code once it has exited and its output has been read to the end (its
 * `close`), or 2 s after its exit should a child it left behind (a primary killed -9) keep its
 * pipes open: resolved on `exit` alone, the last lines it printed could still be in the pipe.
 */
export function endOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      const result = code ?? (signal ? -1 : null);
      const timer = setTimeout(() => resolve(result), 2_000);
      // 'close' comes after 'exit', once the pipes are read to the end.
      child.once('close', () => {
        clearTimeout(timer);
        resolve(result);
      });
    });
  });
}

/** A process's exit code and what it printed, once it is done. */
export function outcomeOf(child: ChildProcess): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d));
    child.stderr?.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The admin command as `npm run admin` runs it: the bundle scripts/admin.mjs keeps fresh (not through npm, whose banner would mix in). */
export const admin = (args: string[], env: Record<string, string> = {}) => run('scripts/admin.mjs', args, env);

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** stdout and stderr, as they came. */
  output(): string;
  /** stdout alone: the JSON log stream. */
  stdout(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `npm start`'s entry point (or `script`, such as the compiled dist/src/server.js) as a real
 * process on a free port; resolves once it listens.
 */
export function startServer(env: Record<string, string> = {}, script = 'src/server.ts'): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs(script), {
      cwd: ROOT_DIR,
      env: { PATH: process.env.PATH ?? '', ...backend().env, PORT: '0', LOG_LEVEL: 'info', WORKER: 'off', ...env },
    });
    let out = '';
    let stdout = '';
    const exited = endOf(child);
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 20_000);
    const onData = (d: Buffer) => {
      out += d;
      stdout += d;
      const port = /"port":(\d+),[^\n]*"msg":"listening"/.exec(out)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve({
          url: `http://127.0.0.1:${port}`,
          child,
          output: () => out,
          stdout: () => stdout,
          async stop(signal = 'SIGTERM') {
            if (child.exitCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}`));
    });
  });
}

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `npm run worker`'s entry point (or `script`) as a real process; resolves once its loop runs. */
export function startWorkerProcess(env: Record<string, string> = {}, script = 'src/worker.ts'): Promise<WorkerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs(script), {
      cwd: ROOT_DIR,
      env: { PATH: process.env.PATH ?? '', ...backend().env, LOG_LEVEL: 'info', ...env },
    });
    let out = '';
    const exited = endOf(child);
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${out}`)), 20_000);
    const started = () => {
      clearTimeout(timer);
      resolve({
        child,
        output: () => out,
        exited,
        async stop(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    };
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      if (out.includes('"msg":"delivery worker started"')) started();
    });
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code} before starting:\n${out}`));
    });
  });
}

/** A loopback port free right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A redis-server of the test's own on `port`, keeping nothing on disk; resolves once it accepts connections. */
export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
        s.on('error', () => resolve(false));
      }),
    5000,
    'redis-server to listen',
  );
  return child;
}

/**
 * A Redis Cluster of the test's own: three masters on loopback (`redis-server
 * --cluster-enabled yes`, then `redis-cli --cluster create`), keeping nothing but their node
 * files in a temporary folder; resolves once the cluster says `cluster_state:ok`.
 */
export async function startRedisCluster(): Promise<{ ports: number[]; url: string; stop(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-redis-cluster-'));
  const ports = [await freePort(), await freePort(), await freePort()];
  const children = ports.map((port) =>
    spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--dir', dir], { stdio: 'ignore' }),
  );
  const stop = async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.all(children.map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((r) => child.once('exit', r)) : undefined)));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      await waitFor(() => new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
        s.on('error', () => resolve(false));
      }), 5000, 'redis-server to listen');
    }
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8', timeout: 20_000 });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.stdout}${create.stderr}`);
    await waitFor(() => ports.every((p) => /cluster_state:ok/.test(spawnSync('redis-cli', ['-p', String(p), 'cluster', 'info'], { encoding: 'utf8' }).stdout)), 15_000, 'the cluster to be ok');
  } catch (err) {
    await stop();
    throw err;
  }
  return { ports, url: `redis-cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, stop };
}

/** Whether `command` is on PATH (or at that absolute path). */
function installed(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).status === 0;
}

/**
 * A MariaDB server of the test's own (`mariadb-install-db`, then `mariadbd`) on a loopback
 * port, with its data in a temporary folder and a database `wsapi`; `stop()` shuts it down and
 * `start()` brings it back on the same port and data. Undefined where MariaDB is not installed.
 */
export async function startPrivateMariadb(): Promise<{ url: string; stop(): Promise<void>; start(): Promise<void>; remove(): Promise<void> } | undefined> {
  const binary = ['mariadbd', '/usr/sbin/mariadbd'].find(installed);
  if (!binary || !installed('mariadb-install-db')) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-mariadb-'));
  const port = await freePort();
  const install = spawnSync('mariadb-install-db', ['--no-defaults', `--datadir=${dir}/data`, '--auth-root-authentication-method=normal', '--skip-test-db', `--user=${os.userInfo().username}`], { encoding: 'utf8', timeout: 60_000 });
  if (install.status !== 0) throw new Error(`mariadb-install-db failed:\n${install.stdout}${install.stderr}`);
  let child: ChildProcess | undefined;
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false));
    });
  const start = async () => {
    child = spawn(binary, ['--no-defaults', `--datadir=${dir}/data`, `--port=${port}`, '--bind-address=127.0.0.1', `--socket=${dir}/mariadb.sock`, `--pid-file=${dir}/mariadb.pid`, `--user=${os.userInfo().username}`, '--skip-log-bin', '--innodb-buffer-pool-size=16M'], { stdio: 'ignore' });
    await waitFor(listening, 30_000, 'the private mariadbd to listen');
  };
  const stop = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  await start();
  const created = spawnSync('mariadb', ['-h', '127.0.0.1', '-P', String(port), '-u', 'root', '-e', 'CREATE DATABASE wsapi CHARACTER SET utf8mb4'], { encoding: 'utf8' });
  if (created.status !== 0) throw new Error(`cannot create the database: ${created.stderr}`);
  return {
    url: `mysql://root@127.0.0.1:${port}/wsapi`,
    stop,
    start,
    async remove() {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `during` while a worker process (`npm run worker`, with `env`) runs, and stops it after, whatever `during` did. */
export async function withWorkerProcess<T>(env: Record<string, string>, during: () => Promise<T>): Promise<T> {
  const worker = await startWorkerProcess(env);
  try {
    return await during();
  } finally {
    await worker.stop();
  }
}

/**
 * A database of a test's own, migrated (`npm run migrate`), for a test whose worker processes
 * must see its deliveries alone: a worker process on the run's shared database also takes what
 * earlier tests left due there.
 */
export async function migratedDatabase(name: string): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const storage = await isolatedDatabase(name);
  const migrated = await run('src/cli/migrate.ts', [], storage.env);
  if (migrated.code !== 0) {
    await storage.drop();
    throw new Error(`migrating ${name}: ${migrated.stderr}`);
  }
  return storage;
}
