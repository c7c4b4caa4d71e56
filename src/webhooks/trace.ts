import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { asNumber } from '../db/decode.js';
import { inSpan } from '../tracing/tracer.js';
import type { Job } from './claim.js';
import { transportOf } from './schemes.js';
import type { Outcome } from './send.js';

/**
 * A delivery attempt as a span (only with traces: worker.ts): a child of the span that wrote
 * the event (its stored traceparent), however long after, so that one trace runs from the API
 * request through the outbox to each attempt; an event written without traces starts a trace
 * of its own. A client span for a webhook, a producer span for a broker's message; the answer's
 * status, or the error, is the span's. The URL's host only: never its path, user or password.
 */
export function traceAttempt(job: Job, attempt: () => Promise<Outcome>): Promise<Outcome> {
  const { delivery } = job;
  const url = new URL(job.url);
  const transport = transportOf(url.protocol) ?? 'http';
  const attributes = {
    'webhook.delivery_id': delivery.id,
    'webhook.subscription_id': delivery.subscription_id,
    'webhook.event_id': delivery.event_id,
    'webhook.event_type': delivery.event_type,
    'webhook.attempt': asNumber(delivery.attempts) + 1,
    'server.address': url.hostname,
    ...(transport === 'http' ? { 'http.request.method': 'POST' } : { 'messaging.system': transport === 'nats' ? 'nats' : 'rabbitmq', 'messaging.operation.type': 'send' }),
  };
  return inSpan(`deliver ${delivery.event_type}`, { kind: transport === 'http' ? SpanKind.CLIENT : SpanKind.PRODUCER, parent: job.traceparent, attributes }, async (span) => {
    const outcome = await attempt();
    if (outcome.status !== null) span?.setAttribute('http.response.status_code', outcome.status);
    if (outcome.error !== null) span?.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
    return outcome;
  });
}
