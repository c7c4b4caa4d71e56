import { StopSignals } from './signals.js';

// `npm start`. Signals are heard before the rest of the server loads (signals.ts).
const signals = new StopSignals();
// Traces, when OTEL_EXPORTER_OTLP_ENDPOINT asks for them, before the drivers load (tracing/start.ts).
await (await import('./tracing/start.js')).startTracing(process.env, 'workspace-api');
const { runServer } = await import('./server-main.js');
runServer(signals);
