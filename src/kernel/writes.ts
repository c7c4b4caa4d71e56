import type { Deps } from '../deps.js';

/** What the generated write handlers use: the database (its transactions and reads), the clock, and the outbox signal. */
export type WriteDeps = Pick<Deps, 'db' | 'reads' | 'clock' | 'notifier'>;
