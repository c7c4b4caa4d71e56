import { ConfigError, SETTINGS } from '../common/config.js';

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
  const { startSdk } = await import('./sdk.js');
  startSdk(settings);
}
