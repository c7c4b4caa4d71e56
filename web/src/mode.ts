/**
 * Live or test: which data the page shows (keys, webhooks, deliveries, requests, usage). It is
 * the URL's: `#/test/keys` is the test keys, `#/keys` the live ones, so a tab keeps its mode and
 * a link says it. Every call about that data passes `inMode()`, which the typed client accepts
 * only on routes that take `mode`.
 */
export type Mode = 'live' | 'test';

let current: Mode = 'live';

/** Set from the URL before the page renders (main.tsx). */
export function setMode(mode: Mode): void {
  current = mode;
}

export const mode = (): Mode => current;

/** The query parameter of the mode shown. */
export const inMode = (): { mode: Mode } => ({ mode: current });

/** A link to `path` (`keys/key_...`) in the mode shown, or in `to`. */
export const link = (path: string, to: Mode = current): string => `#/${to === 'test' ? 'test/' : ''}${path.replace(/^#?\/?/, '')}`;
