import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { clusterIndex, superviseServers } from './cluster.js';
import { boot, migrate, warnOfDevelopmentSettings } from './boot.js';
import { seedDemoIfEmpty, type Demo } from './demo/seed.js';
import { startHousekeeping } from './housekeeping.js';
import { startJobRunner } from './jobs.js';
import { createApp } from './app.js';
import { checkColumns, reindexStale } from './kernel/storage/index.js';
import { createHttpServer } from './http/server.js';
import { startMetricsServer } from './metrics/server.js';
import type { StopSignals } from './signals.js';
import { runMain } from './startup.js';
import { startWorker, type Worker } from './webhooks/worker.js';

/** Beyond this (plus one delivery timeout, for the inline worker) a stop gives up waiting. */
const DRAIN_TIMEOUT_MS = 10_000;

/** The demo's key and admin, once, on stderr (the terminal's): stdout is the JSON log stream, which a collector may keep. */
function printDemo(demo: Demo, host: string, port: number): void {
  console.error(
    [
      '',
      'Demo workspace created with sample data. Its API key (shown once, keep it):',
      '',
      `  ${demo.token}`,
      '',
      `Try: curl -H "Authorization: Bearer ${demo.token}" "http://${host}:${port}/v1/deals?limit=2"`,
      '',
      `The Developer page, http://${host}:${port}/admin/, has a demo admin (password shown once):`,
      '',
      `  email:    ${demo.admin.email}`,
      `  password: ${demo.admin.password}`,
      '',
    ].join('\n'),
  );
}

async function main(signals: StopSignals): Promise<void> {
  const { config, deps, registry } = await boot();
  const { log } = deps;
  signals.closes(deps.close, (signal) => log.info({ signal }, 'stopped during start-up'));
  // One process prepares the database: a lone server, or the primary of WEB_CONCURRENCY.
  let demo: Demo | null = null;
  if (cluster.isPrimary) {
    warnOfDevelopmentSettings(deps);
    for (const { file, message } of registry.deprecations) log.warn({ plugin: file, deprecated: true }, `plugin ${file}: ${message}`);
    const applied = await signals.finishing(migrate(deps));
    if (applied.length > 0) log.info({ migrations: applied }, 'migrated');
    const indexWarnings = await checkColumns(deps.db, registry).catch(async (err: unknown) => {
      await deps.close();
      throw err;
    });
    for (const { file, message } of indexWarnings) log.warn({ plugin: file }, `plugin ${file}: ${message}`);
    const reindexed = (await signals.finishing(reindexStale(deps.db, registry, deps.clock.now()))).filter((r) => r.objects > 0);
    if (reindexed.length > 0) log.info({ indexed: Object.fromEntries(reindexed.map((r) => [r.resource, r.objects])) }, 'made the search terms of the objects already stored');
    // Never on MySQL unless asked: a production database's first start must not hold a full-scope key.
    demo = config.demo ? await signals.finishing(seedDemoIfEmpty(deps, registry)) : null;
  }
  if (cluster.isPrimary && config.webConcurrency > 1) {
    await deps.close();
    // The supervisor hears signals itself, and tells each server to drain.
    signals.whenStopped(() => undefined);
    superviseServers(config.webConcurrency, log, (port) => demo && printDemo(demo, config.host, port));
    return;
  }
  const app = createApp(deps, registry);
  const housekeeping = startHousekeeping(deps);
  const jobs = startJobRunner(deps, registry);
  const worker: Worker | undefined = config.worker === 'inline' ? startWorker(deps, { inline: true, render: (event, apiVersion) => app.versions.eventDown(event, apiVersion) }) : undefined;
  const server = createHttpServer(app.koa.callback(), config.http, log);
  // Under WEB_CONCURRENCY each process serves its metrics on a port of its own: METRICS_PORT + its index.
  const metricsServer = config.metrics ? await startMetricsServer(deps.metrics.registry, { ...config.metrics, port: config.metrics.port && config.metrics.port + clusterIndex() }, log) : undefined;

  server.on('error', (err) => {
    console.error(`Cannot listen on ${config.host}:${config.port} (PORT, HOST): ${err.message}`);
    process.exit(1);
  });
  server.listen(config.port, config.host, () => {
    const { port } = server.address() as AddressInfo;
    log.info({ host: config.host, port, database: config.database.client, redis: Boolean(config.redisUrl), developer_page: `http://${config.host}:${port}/admin/` }, 'listening');
    if (demo) printDemo(demo, config.host, port);
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'draining in-flight requests');
    const force = setTimeout(() => {
      log.error('drain timed out; exiting');
      process.exit(1);
    }, DRAIN_TIMEOUT_MS + config.webhookTimeoutMs);
    force.unref();
    housekeeping.stop();
    metricsServer?.close();
    // Requests first (they may still write events), then the deliveries in flight.
    server.close(async () => {
      await jobs.stop();
      await worker?.stop();
      await app.close();
      await deps.close();
      log.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  signals.whenStopped(stop);
}

export const runServer = (signals: StopSignals) => runMain(() => main(signals), signals);
