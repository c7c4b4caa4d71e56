import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './app.js';

/** Whether something listens on 127.0.0.1:`port` (within a second). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port, timeout: 1000 });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

/**
 * The webhook destinations' tests need the real broker: NATS (4222) or RabbitMQ (5672) on this
 * machine. Without it they are skipped, saying so (a fresh checkout's `npm test` needs no
 * service); with REQUIRE_BROKERS=true (CI) a missing broker fails them instead.
 */
export async function brokerOrSkip(suite: Mocha.Context, name: string, port: number): Promise<void> {
  if (await listening(port)) return;
  if (process.env.REQUIRE_BROKERS === 'true') throw new Error(`REQUIRE_BROKERS=true but ${name} does not listen on 127.0.0.1:${port}`);
  console.log(`    (${name} tests skipped: nothing listens on 127.0.0.1:${port})`);
  suite.skip();
}

/**
 * The TLS destinations' tests also run programs of this machine (`nats-server`, `openssl`):
 * skipped, saying so, when one is missing; with REQUIRE_BROKERS=true a missing one fails them.
 */
export function programOrSkip(suite: Mocha.Context, program: string): void {
  if (spawnSync(program, ['--version'], { stdio: 'ignore' }).error === undefined) return;
  if (process.env.REQUIRE_BROKERS === 'true') throw new Error(`REQUIRE_BROKERS=true but ${program} is not on the PATH`);
  console.log(`    (tests skipped: ${program} is not on the PATH)`);
  suite.skip();
}

export interface NatsServer {
  port: number;
  stop(): Promise<void>;
}

/**
 * A nats-server of a test's own, with JetStream, on a free loopback port and a store in a
 * directory of its own (`args` add to it: `--tls ...`, `--auth <token>`); stop() ends it, waits
 * for it to exit and removes the store.
 */
export async function startNatsServer(args: string[]): Promise<NatsServer> {
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-nats-'));
  const server = spawn('nats-server', ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', store, ...args]);
  const exited = new Promise<void>((resolve) => {
    server.once('exit', () => resolve());
    server.once('error', () => resolve());
  });
  // The store is removed once the server has exited: it writes its streams' files until then.
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill();
    await exited;
    fs.rmSync(store, { recursive: true, force: true });
  };
  let log = '';
  server.stderr.on('data', (d: Buffer) => (log += d));
  const listening = /Listening for client connections on 127\.0\.0\.1:(\d+)/;
  try {
    await waitFor(() => listening.test(log), 10_000, 'nats-server listening');
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}:\n${log}`, { cause: error });
  }
  return { port: Number(listening.exec(log)?.[1]), stop };
}
