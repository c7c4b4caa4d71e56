/**
 * What the benchmarks share: a fresh MariaDB or PostgreSQL database (or SQLite file), keys spread over a workspace, servers
 * started as child processes, and autocannon runs summarised in alternating rounds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import type { Knex } from 'knex';
import { createKey, createWorkspace } from '../src/auth/keys.js';
import { ROOT_DIR, loadConfig } from '../src/common/config.js';
import { createDb } from '../src/db/connect.js';
import { serverAdmin } from '../src/db/create.js';
import { migrateLatest } from '../src/db/migrate.js';
import { newKey } from '../src/secrets/keyring.js';

const RAW_URL = process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/test';
/** `BENCH_DATABASE_URL=sqlite:FILE` benchmarks the embedded default: SQLite and the in-memory limiter. */
export const EMBEDDED = RAW_URL.startsWith('sqlite:');
const SERVER_URL = new URL(EMBEDDED ? 'mysql://unused' : RAW_URL);
/** `BENCH_DATABASE_URL=postgres://...` benchmarks PostgreSQL + Redis. */
const POSTGRES = SERVER_URL.protocol.startsWith('postgres');
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Load is spread over this many keys (6000 requests/minute each) so the limiter admits it all. */
export const KEYS = 100;
const DATABASE = 'wsapi_bench';
/** A database server requires SECRET_KEYS: one for the run (every bench database is made afresh). */
const SECRET_KEYS = process.env.SECRET_KEYS ?? newKey();

/**
 * Where a bench database lives: `wsapi_bench` (or the SQLite file given), and for a `name`, a
 * sibling of its own (`wsapi_bench_<name>`, `<file>-<name>`) for a server that must not share
 * the first one's data.
 */
export function storageFor(name = ''): Record<string, string> {
  if (EMBEDDED) return { DATABASE_URL: name ? `${RAW_URL}-${name}` : RAW_URL };
  const url = new URL(SERVER_URL.href);
  url.pathname = `/${DATABASE}${name ? `_${name}` : ''}`;
  return { DATABASE_URL: url.href, REDIS_URL, REDIS_PREFIX: `wsapi_bench${name ? `_${name}` : ''}:`, SECRET_KEYS };
}
export const env = { PATH: process.env.PATH ?? '', ...storageFor(), LOG_LEVEL: 'warn', WORKER: 'off', PORT: '0' };
/** What the figures were measured on. */
export const BACKEND = EMBEDDED ? 'the embedded default (SQLite, in-memory limiter)' : POSTGRES ? 'PostgreSQL + Redis' : 'MariaDB + Redis';

/** Drops and recreates a bench database (`name`: see storageFor), migrated, with one workspace and KEYS keys holding `scopes`. */
export async function freshDatabase(scopes: string[], name = ''): Promise<{ db: Knex; workspaceId: string; tokens: string[] }> {
  await emptyDatabase(name);
  return populate(scopes, name);
}

/** Drops and recreates a bench database, empty. */
export async function emptyDatabase(name = ''): Promise<void> {
  const url = storageFor(name).DATABASE_URL as string;
  if (EMBEDDED) {
    const file = url.slice('sqlite:'.length);
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
  } else {
    const server = serverAdmin(url);
    await server.drop(server.database);
    await server.create(server.database);
    await server.destroy();
  }
}

/** Migrates a bench database to this checkout's schema and adds one workspace and KEYS keys holding `scopes`. */
export async function populate(scopes: string[], name = ''): Promise<{ db: Knex; workspaceId: string; tokens: string[] }> {
  const config = loadConfig({ ...env, ...storageFor(name) });
  const db = createDb(config.database);
  await migrateLatest(db, config.migrationsDirs);
  const ws = await createWorkspace(db, { name: 'bench', plan: 'enterprise' });
  const tokens: string[] = [];
  for (let i = 0; i < KEYS; i++) tokens.push((await createKey(db, scopes, { workspace: ws.id, name: `bench ${i}`, scopes, rate_limit: 6000 })).token);
  return { db, workspaceId: ws.id, tokens };
}

/**
 * Node's flags for every server started: `BENCH_PROF=DIR` writes a CPU profile of each there;
 * `BENCH_NODE_FLAGS` adds flags of its own, space-separated (both sides get the same), such as
 * `--no-allocation-site-pretenuring` to tell a change's cost from V8's choice to allocate a
 * site's objects in the old generation (bench/HISTORY.md, issue 57).
 */
const NODE_FLAGS = [
  ...(process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : []),
  ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== ''),
];

export interface Server {
  url: string;
  child: ChildProcess;
}

/**
 * Starts a server script (of this checkout, or of the one in `dir`) and resolves once it logs
 * the port it listens on (or the `ready` message).
 */
export function start(script: string, extra: Record<string, string> = {}, ready?: string, dir = ROOT_DIR): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', path.join(dir, script)], { cwd: dir, env: { ...env, LOG_LEVEL: 'info', ...extra } });
    let out = '';
    const collect = (d: Buffer) => {
      out += d;
      const port = /"port":(\d+)[^\n]*"msg":"listening"|"msg":"listening","port":(\d+)/.exec(out);
      if (ready ? !out.includes(`"msg":"${ready}"`) : !port) return;
      // From here on the access log is drained, not kept: the server logs as it would in
      // production (LOG_LEVEL=info, one line per request), and this process does no work for it.
      child.stdout.off('data', collect);
      // BENCH_STDOUT_DIR=DIR keeps each server's output (with BENCH_NODE_FLAGS=--trace-gc, its collections) in DIR/server-PID.log.
      if (process.env.BENCH_STDOUT_DIR) {
        const file = fs.createWriteStream(path.join(process.env.BENCH_STDOUT_DIR, `server-${child.pid}.log`));
        child.stdout.pipe(file);
        child.stderr.pipe(file);
      } else child.stdout.resume();
      resolve({ url: port ? `http://127.0.0.1:${port[1] ?? port[2]}` : '', child });
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.on('exit', (code) => reject(new Error(`${script} exited ${code}: ${out}`)));
  });
}

export interface Run {
  rps: number;
  mean: number;
  p50: number;
  p99: number;
  total: number;
  /** The server's own CPU time per request, in microseconds, when its pid was given (Linux). */
  cpu?: number;
  /** With a pid: every part of the machine's CPU time per request, in microseconds (see machineCpuMs). */
  cpuBy?: Record<CpuPart, number>;
}

/** `seconds` of load on one URL, each request with the next key's token; any non-2xx fails the run. */
export async function load(url: string, tokens: string[], seconds: number, options: { connections?: number; method?: 'GET' | 'POST' | 'PATCH'; body?: string; amount?: number; overallRate?: number; vary?: (n: number) => { path: string; body: string }; pid?: number | undefined } = {}): Promise<Run> {
  let i = 0;
  const { connections = 50, method = 'GET', body, amount, overallRate, vary, pid } = options;
  const before = pid === undefined ? undefined : cpuMsOf(pid);
  const machineBefore = pid === undefined ? undefined : machineCpuMs(pid);
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    ...(amount !== undefined ? { amount } : {}),
    ...(overallRate !== undefined ? { overallRate } : {}),
    requests: [
      {
        method,
        ...(body !== undefined ? { body } : {}),
        setupRequest: (req) => ({ ...req, ...(vary ? vary(i) : {}), headers: { ...req.headers, ...(body !== undefined || vary ? { 'content-type': 'application/json' } : {}), authorization: `Bearer ${tokens[i++ % tokens.length]}` } }),
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const after = pid === undefined ? undefined : cpuMsOf(pid);
  const machineAfter = pid === undefined ? undefined : machineCpuMs(pid);
  const total = result.requests.total;
  const cpu = before === undefined || after === undefined || total === 0 ? {} : { cpu: ((after - before) * 1000) / total };
  const cpuBy =
    machineBefore === undefined || machineAfter === undefined || total === 0
      ? {}
      : { cpuBy: Object.fromEntries(CPU_PARTS.map((part) => [part, ((machineAfter[part] - machineBefore[part]) * 1000) / total])) as Record<CpuPart, number> };
  return { rps: result.requests.average, mean: result.latency.mean, p50: result.latency.p50, p99: result.latency.p99, total, ...cpu, ...cpuBy };
}

/** What uses the machine's CPU during a run: the server under load, the database server, Redis, and this process. */
export const CPU_PARTS = ['server', 'database', 'Redis', 'load generator'] as const;
export type CpuPart = (typeof CPU_PARTS)[number];
/** The database server's and Redis's processes, by their command name. */
const SERVICE_PROCESSES: ReadonlyArray<readonly [CpuPart, RegExp]> = [
  ['database', /^(mariadbd|mysqld|postgres)$/],
  ['Redis', /^redis-server$/],
];

/**
 * CPU time used so far, in milliseconds, by each part of the machine (CPU_PARTS): `serverPid`,
 * every process of the database server and of Redis (a PostgreSQL backend that exits during a
 * run takes its time with it), and this process, which runs the load (Linux; undefined
 * elsewhere). On a machine whose cores are all busy, a side's requests a second follow the sum.
 */
export function machineCpuMs(serverPid: number): Record<CpuPart, number> | undefined {
  const parts: Record<CpuPart, number> = { server: 0, database: 0, Redis: 0, 'load generator': 0 };
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const part = Number(pid) === serverPid ? 'server' : Number(pid) === process.pid ? 'load generator' : SERVICE_PROCESSES.find(([, name]) => name.test(command))?.[0];
    if (part) parts[part] += cpuMsIn(stat);
  }
  return parts;
}

/**
 * CPU time a process has used so far, in milliseconds (user + system, from /proc on Linux;
 * undefined elsewhere). Per request, it moves less with what else the machine runs than req/s.
 */
export function cpuMsOf(pid: number | undefined): number | undefined {
  try {
    return cpuMsIn(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The CPU time, in milliseconds, in a process's /proc/<pid>/stat line. */
function cpuMsIn(stat: string): number {
  // The fields after the command's name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  // utime and stime, fields 14 and 15 of the line (11 and 12 after the name), in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The middle of some figures (the upper one of an even count; NaN of none). */
export const medianOf = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** The median of the runs' server CPU per request (undefined when a run has none). */
export function medianCpu(runs: readonly Run[]): number | undefined {
  const cpus = runs.map((r) => r.cpu);
  if (cpus.length === 0 || cpus.some((c) => c === undefined)) return undefined;
  return medianOf(cpus as number[]);
}

export const fmt = (n: number) => n.toFixed(n < 10 ? 2 : 0);
export const median = <T extends { rps: number }>(runs: T[]): T => [...runs].sort((x, y) => x.rps - y.rps)[Math.floor(runs.length / 2)] as T;

/**
 * Alternates rounds (warm both first) and keeps the median of each, so a noisy moment on
 * this shared machine (database, Redis, load generator, two cores) does not decide the ratio.
 * Prints `title`, then each round as it ends, naming each side by its label.
 */
export async function compare(
  title: string,
  labels: { baseline: string; subject: string },
  baseline: () => Promise<Run>,
  subject: () => Promise<Run>,
): Promise<{ baseline: Run; subject: Run; ratio: string; median: number }> {
  console.log('\n%s, median of %d rounds of %ds', title, ROUNDS, DURATION);
  const baselines: Run[] = [];
  const subjects: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const [before, after] = [await baseline(), await subject()];
    baselines.push(before);
    subjects.push(after);
    console.log('  round %d: %s %s req/s, %s %s req/s, ratio %s', round + 1, labels.baseline, fmt(before.rps), labels.subject, fmt(after.rps), (after.rps / before.rps).toFixed(2));
  }
  const ratios = subjects.map((r, i) => r.rps / (baselines[i]?.rps ?? 1)).sort((x, y) => x - y);
  const middle = ratios[Math.floor(ratios.length / 2)]!;
  const ratio = `median ${middle.toFixed(2)}, spread ${ratios[0]!.toFixed(2)}-${ratios[ratios.length - 1]!.toFixed(2)}`;
  return { baseline: median(baselines), subject: median(subjects), ratio, median: middle };
}

/** An OTLP/HTTP collector that answers every export and keeps nothing, as a process of its own (off the load's event loop). */
export function startSink(): Promise<{ url: string; child: ChildProcess }> {
  const program = `const s = require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => r.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()); }); s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', program], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.once('data', (d: Buffer) => resolve({ url: `http://127.0.0.1:${String(d).trim()}`, child }));
    child.on('exit', (code) => reject(new Error(`the collector sink exited ${code}`)));
  });
}
