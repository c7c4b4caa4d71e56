import { boot } from './boot.js';
import { migrateLatest } from './db/migrate.js';
import { startHousekeeping } from './housekeeping.js';
import { startWorker } from './webhooks/worker.js';

/** `npm run worker`: a delivery worker alone. Run as many as needed, beside the servers. */
async function main(): Promise<void> {
  const { config, deps } = await boot();
  try {
    await migrateLatest(deps.db, config.migrationsDirs);
  } catch (err) {
    console.error(`Cannot migrate the database at DATABASE_URL: ${(err as Error).message}`);
    await deps.close();
    process.exit(1);
  }
  const worker = startWorker(deps);
  const housekeeping = startHousekeeping(deps);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.log.info({ signal, worker: worker.id }, 'finishing deliveries in flight');
    housekeeping.stop();
    await worker.stop();
    await deps.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
