import { StopSignals } from './signals.js';

// `npm run worker`. Signals are heard before the rest of the worker loads (signals.ts).
const signals = new StopSignals();
const { runWorker } = await import('./worker-main.js');
runWorker(signals);
