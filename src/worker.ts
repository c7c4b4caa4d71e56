import { StopSignals } from './signals.js';

// `npm run worker`. Signals are heard before the rest of the worker loads (signals.ts).
const signals = new StopSignals();
// Traces, when OTEL_EXPORTER_OTLP_ENDPOINT asks for them, before the drivers load (tracing/start.ts).
await (await import('./tracing/start.js')).startTracing(process.env, 'workspace-api-worker');
const { runWorker } = await import('./worker-main.js');
runWorker(signals);
