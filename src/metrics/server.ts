import http from 'node:http';
import type { Logger } from 'pino';
import { collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * Serves the process's metrics in Prometheus text format on `GET /metrics` (METRICS_PORT, on
 * METRICS_HOST: 127.0.0.1 unless told otherwise). Nothing else answers there.
 */
export async function startMetricsServer(registry: Registry, where: { port: number; host: string }, log: Logger): Promise<http.Server> {
  // The process's own series (CPU, memory, event loop, GC) only where they are served: each
  // collector keeps a monitor running.
  collectDefaultMetrics({ register: registry, prefix: 'wsapi_' });
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => {
        log.warn({ err }, 'metrics scrape failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, resolve);
  });
  const address = server.address() as { port: number };
  log.info({ metrics: `http://${where.host}:${address.port}/metrics` }, 'metrics listening');
  return server;
}
