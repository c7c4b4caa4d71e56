import { boot, migrate, warnOfDevelopmentSettings } from './boot.js';
import { startHousekeeping } from './housekeeping.js';
import { startJobRunner } from './jobs.js';
import { startMetricsServer } from './metrics/server.js';
import type { StopSignals } from './signals.js';
import { runMain } from './startup.js';
import { startWorker } from './webhooks/worker.js';
import { Versions } from './versions/index.js';

/** `npm run worker`: a delivery worker alone. Run as many as needed, beside the servers. */
async function main(signals: StopSignals): Promise<void> {
  const { deps, registry } = await boot();
  signals.closes(deps.close, (signal) => deps.log.info({ signal }, 'stopped during start-up'));
  warnOfDevelopmentSettings(deps);
  await signals.finishing(migrate(deps));
  const versions = new Versions(registry);
  const worker = startWorker(deps, { render: (event, apiVersion) => versions.eventDown(event, apiVersion) });
  const housekeeping = startHousekeeping(deps);
  const jobs = startJobRunner(deps, registry);
  const metricsServer = deps.config.metrics ? await startMetricsServer(deps.metrics.registry, deps.config.metrics, deps.log) : undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.log.info({ signal, worker: worker.id }, 'finishing deliveries in flight');
    housekeeping.stop();
    metricsServer?.close();
    await jobs.stop();
    await worker.stop();
    await deps.close();
    process.exit(0);
  };
  signals.whenStopped((signal) => void stop(signal));
}

export const runWorker = (signals: StopSignals) => runMain(() => main(signals), signals);
