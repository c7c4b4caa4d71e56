import { ApiError, type ErrorItem } from '../common/errors.js';
import { patternErrors } from '../events/patterns.js';
import { bareHost, checkHost, DestinationError, schemeError } from './ssrf.js';
import type { WebhookDeps } from './subscriptions.js';
import { NATS_SCHEMES, natsUrlError } from './nats.js';
import { amqpUrlError } from './amqp.js';

/** What to do about a refused URL when the receiver is a local one, as it is while trying webhooks out. */
const LOCAL_HINT = 'to test with a receiver on this machine or a private network, the operator sets WEBHOOK_ALLOW_PRIVATE=true (development only)';

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
    const nats = NATS_SCHEMES.has(target.protocol) ? natsUrlError(target) : target.protocol === 'amqp:' || target.protocol === 'amqps:' ? amqpUrlError(target) : undefined;
    if (scheme) errors.push({ pointer: '/url', message: withHint(deps, scheme) });
    else if (target.hash) errors.push({ pointer: '/url', message: 'must not have a fragment' });
    else if (nats) errors.push({ pointer: '/url', message: nats });
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
