import type { Deps } from './deps.js';
import type { Registry } from './kernel/registry/index.js';
import { startJobs } from './admin/jobs.js';
import { deleteTestData } from './admin/test-data.js';

/**
 * The jobs a server or worker process runs beside its work (admin/jobs.ts), one at a time: what
 * each kind of job does.
 */
export function startJobRunner(deps: Pick<Deps, 'db' | 'clock' | 'log'>, registry: Registry): { stop(): Promise<void>; poke(): void } {
  return startJobs(deps, { delete_test_data: deleteTestData(deps.db, registry) });
}
