import { setFlagsFromString } from 'node:v8';
import { ConfigError, SETTINGS } from '../common/config.js';

/**
 * V8's flags a traced process runs with, set before anything else of it loads.
 *
 * `--no-allocation-site-pretenuring`: V8 may decide, from one young-generation collection that
 * found most of an allocation site's recent objects alive, to allocate that site's objects in
 * the old generation from then on, for the life of the process. Under load on PostgreSQL, it
 * decided so for the objects the driver makes of each row (during the first seconds of load, in
 * 22 of 28 traced servers measured, and in none of 36 untraced ones): each row was then born
 * old, kept its young strings alive through the next collection as if it still lived, and the
 * server spent 15-20% of its throughput on it (collections three times as long, the old
 * generation filling with dead rows). Tracing's own allocations made that decision likelier.
 * Without the heuristic, rows die young where they are born, as they do in a server V8 did not
 * decide it for; long-lived objects reach the old generation by surviving two collections, as
 * they do anyway. bench/HISTORY.md has the measurements.
 */
export const TRACED_V8_FLAGS = ['--no-allocation-site-pretenuring'];

/**
 * Starts tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set, and only then loads the SDK
 * (tracing/sdk.ts, by a dynamic import). An entry point awaits this before it imports the rest
 * of the service: the instrumentations patch the database and Redis drivers as they are first
 * loaded. A setting that cannot be read is left for start-up's own check (boot.ts), which
 * stops with one line naming it.
 */
export async function startTracing(env: NodeJS.ProcessEnv, defaultServiceName: string): Promise<void> {
  let settings;
  try {
    const endpoint = SETTINGS.otelEndpoint.read(env[SETTINGS.otelEndpoint.name]);
    if (endpoint === undefined) return;
    settings = {
      protocol: SETTINGS.otelProtocol.read(env[SETTINGS.otelProtocol.name]),
      serviceName: SETTINGS.otelServiceName.read(env[SETTINGS.otelServiceName.name]) ?? defaultServiceName,
      sampler: SETTINGS.otelSampler.read(env[SETTINGS.otelSampler.name]),
      ratio: SETTINGS.otelSamplerArg.read(env[SETTINGS.otelSamplerArg.name]),
    };
  } catch (err) {
    if (err instanceof ConfigError) return;
    throw err;
  }
  for (const flag of TRACED_V8_FLAGS) setFlagsFromString(flag);
  const { startSdk } = await import('./sdk.js');
  startSdk(settings);
}
