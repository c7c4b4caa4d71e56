import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { tracer } from '../../tracing/tracer.js';
import type { Ctx } from './context.js';
import { routeOf } from './route-template.js';

/**
 * A server span per request, outermost (only with traces: app.ts), so that everything the
 * request does, its database and Redis calls and its log lines among them, is within it. An
 * incoming W3C `traceparent` is continued. Named, once the router has matched, by method and
 * route template (`GET /v1/deals/{id}`), never by the raw path.
 */
export function traceRequests() {
  return (ctx: Ctx, next: () => Promise<unknown>) => {
    const parent = propagation.extract(ROOT_CONTEXT, ctx.headers);
    const span = tracer().startSpan(ctx.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path, 'url.scheme': ctx.protocol, 'client.address': ctx.ip } }, parent);
    // A request the sampler left out is not traced at all: nothing is made active for it, so its
    // database calls, log lines and events look for a span and find none at once.
    if (!span.isRecording()) return next();
    return context.with(trace.setSpan(parent, span), async () => {
      try {
        await next();
      } finally {
        const route = routeOf(ctx);
        if (route !== 'unmatched') {
          span.updateName(`${ctx.method} ${route}`);
          span.setAttribute('http.route', route);
        }
        span.setAttribute('http.response.status_code', ctx.status);
        if (ctx.state.requestId) span.setAttribute('request_id', ctx.state.requestId);
        if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
    });
  };
}
