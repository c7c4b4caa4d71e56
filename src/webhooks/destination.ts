import { ApiError, type ErrorItem } from '../common/errors.js';
import { patternErrors } from '../events/patterns.js';
import { bareHost, checkHost, DestinationError } from './ssrf.js';
import { schemeError, transportOf } from './schemes.js';
import type { WebhookDeps } from './subscriptions.js';
import { natsUrlError } from './nats.js';
import { amqpUrlError } from './amqp.js';
import { undecodablePart } from '../common/url-parts.js';

/** What to do about a refused URL when the receiver is a local one, as it is while trying webhooks out. */
const LOCAL_HINT = 'to test with a receiver on this machine or a private network, the operator sets WEBHOOK_ALLOW_PRIVATE=true (development only)';

/**
 * The first part of the URL that the service decodes (user and password; a broker's path, its
 * subject or exchange) and that is not percent-encoded UTF-8, or undefined. An https path is
 * sent as it is.
 */
function undecodable(url: URL): string | undefined {
  return undecodablePart({ user: url.username, password: url.password, ...(transportOf(url.protocol) !== 'http' ? { path: url.pathname } : {}) });
}

function withHint(deps: WebhookDeps, message: string): string {
  return deps.config.webhookAllowPrivate ? message : `${message}; ${LOCAL_HINT}`;
}

/**
 * Where a subscription may send and what it may select (API.md section 8): the URL's scheme
 * and the patterns, then (if the scheme is fine) where the URL leads. 422 naming each problem.
 */
export async function checkSubscriptionInput(deps: WebhookDeps, body: { url?: string; events?: string[] }): Promise<void> {
  const errors: ErrorItem[] = [];
  let target: URL | undefined;
  if (body.url !== undefined) {
    target = new URL(body.url);
    const scheme = schemeError(target, deps.config.webhookAllowPrivate);
    const malformed = scheme ? undefined : undecodable(target);
    const transport = transportOf(target.protocol);
    const destination = malformed ? undefined : transport === 'nats' ? natsUrlError(target) : transport === 'amqp' ? amqpUrlError(target) : undefined;
    if (scheme) errors.push({ pointer: '/url', message: withHint(deps, scheme) });
    else if (target.hash) errors.push({ pointer: '/url', message: 'must not have a fragment' });
    else if (malformed) errors.push({ pointer: '/url', message: `must write its ${malformed} percent-encoded as UTF-8 (a % followed by two hex digits, each sequence a whole character)` });
    else if (destination) errors.push({ pointer: '/url', message: destination });
  }
  if (body.events !== undefined) errors.push(...patternErrors(body.events, deps.catalog));
  if (errors.length === 0 && target) {
    try {
      await checkHost(bareHost(target), deps.resolve, deps.config.webhookAllowPrivate);
    } catch (err) {
      if (!(err instanceof DestinationError)) throw err;
      errors.push({ pointer: '/url', message: withHint(deps, err.message) });
    }
  }
  if (errors.length > 0) throw new ApiError('validation_failed', `The subscription is invalid: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
}
