import { ApiError } from './errors.js';
import { epochMsOf } from './rfc3339.js';

/**
 * A time window (the event log, a key's request log, usage, a subscription's recovery): `since`
 * included, `until` excluded, both RFC 3339, declared and read here alone.
 */

/** The two properties of a window as a query's or a body's schema declares them, each with what it means there. */
export function windowProperties(since: string, until: string) {
  return {
    since: { type: 'string', format: 'date-time', description: since },
    until: { type: 'string', format: 'date-time', description: until },
  } as const;
}

/**
 * The window `given` names, in epoch milliseconds: `since` must come before `until` (when both
 * are known: given, or `until` left out for `now`). The refusal names the value where it came
 * from (a query parameter, or a body's pointer) and, when `until` was left out, says that it
 * stood for now: `since` in the future otherwise reads as a complaint about a value the client
 * never sent.
 */
export function readWindow(given: { since?: string | undefined; until?: string | undefined }, from: 'query' | 'body', now?: number): { since?: number; until?: number } {
  const since = given.since === undefined ? undefined : epochMsOf(given.since);
  const until = given.until !== undefined ? epochMsOf(given.until) : now;
  if (since !== undefined && until !== undefined) requireSinceBeforeUntil(since, until, given.until !== undefined, from);
  return { ...(since !== undefined ? { since } : {}), ...(until !== undefined ? { until } : {}) };
}

/** Refuses a window whose `since` is not before its `until` (see readWindow). */
export function requireSinceBeforeUntil(since: number, until: number, untilGiven: boolean, from: 'query' | 'body'): void {
  if (since < until) return;
  const message = untilGiven ? 'must be before until' : `must be before until, which is now (${new Date(until).toISOString()}) when left out`;
  const error = from === 'query' ? { parameter: 'since', message } : { pointer: '/since', message };
  throw new ApiError(from === 'query' ? 'invalid_parameter' : 'validation_failed', `since ${message}.`, { errors: [error] });
}
