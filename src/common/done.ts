/**
 * A promise already fulfilled with nothing, shared: what a function answers that must answer
 * with a promise but has nothing to wait for (a statement better-sqlite3 has run, a check with
 * nothing to check), without making a promise of its own on the hot path. Awaiting it, however
 * often, is awaiting any settled promise.
 */
export const DONE: Promise<void> = Promise.resolve();
