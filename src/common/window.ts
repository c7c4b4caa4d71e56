import { ApiError } from './errors.js';

/**
 * A time window's check, for lists and recoveries that take `since` and `until`: `since` must
 * come before `until`. The refusal names the value where it came from (a query parameter, or a
 * body's pointer) and, when `until` was left out, says that it stood for now: `since` in the
 * future otherwise reads as a complaint about a value the client never sent.
 */
export function requireSinceBeforeUntil(since: number, until: number, untilGiven: boolean, from: 'query' | 'body'): void {
  if (since < until) return;
  const message = untilGiven ? 'must be before until' : `must be before until, which is now (${new Date(until).toISOString()}) when left out`;
  const error = from === 'query' ? { parameter: 'since', message } : { pointer: '/since', message };
  throw new ApiError(from === 'query' ? 'invalid_parameter' : 'validation_failed', `since ${message}.`, { errors: [error] });
}
