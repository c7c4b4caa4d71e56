import cluster from 'node:cluster';
import type { Logger } from 'pino';

/** Which of the WEB_CONCURRENCY server processes this is (0 for a lone server). */
export const clusterIndex = (): number => (cluster.isWorker ? Number(process.env.WSAPI_CLUSTER_INDEX ?? 0) : 0);

/**
 * The primary of WEB_CONCURRENCY=N (node:cluster): forks N server processes that share the
 * port, starts another when one dies, and on SIGTERM or SIGINT tells each to drain and exits
 * when all have (0 if each did cleanly). A process that dies before it ever listened stops the
 * whole start-up (exit 1) instead of being started again and again.
 */
export function superviseServers(count: number, log: Logger, onFirstListening: (port: number) => void): void {
  let stopping = false;
  let failed = false;
  let announced = false;
  const listened = new Set<number>();
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, processes: Object.keys(cluster.workers ?? {}).length }, 'stopping the server processes');
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  const fork = (index: number) => {
    const worker = cluster.fork({ WSAPI_CLUSTER_INDEX: String(index) });
    worker.on('exit', (code, signal) => {
      if (code !== 0) failed = true;
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) {
          log.info('stopped');
          process.exit(failed ? 1 : 0);
        }
        return;
      }
      if (!listened.has(worker.id)) {
        log.error({ index, code, signal }, 'a server process exited before it listened; stopping');
        failed = true;
        stop('start-up failure');
        return;
      }
      log.error({ index, code, signal }, 'a server process exited; starting another');
      fork(index);
    });
  };
  cluster.on('listening', (worker, address) => {
    listened.add(worker.id);
    if (!announced) {
      announced = true;
      onFirstListening(address.port);
    }
  });
  for (let i = 0; i < count; i += 1) fork(i);
  log.info({ processes: count }, 'server processes started (WEB_CONCURRENCY)');
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
