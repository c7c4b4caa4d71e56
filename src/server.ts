import { StopSignals } from './signals.js';

// `npm start`. Signals are heard before the rest of the server loads (signals.ts).
const signals = new StopSignals();
const { runServer } = await import('./server-main.js');
runServer(signals);
