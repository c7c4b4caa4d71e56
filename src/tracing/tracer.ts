import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace, type Attributes, type Span, type SpanKind, type Tracer } from '@opentelemetry/api';

/**
 * Traces as the rest of the service sees them, through `@opentelemetry/api` alone (a few
 * kilobytes, no SDK). Until tracing/sdk.ts registers the SDK (OTEL_EXPORTER_OTLP_ENDPOINT set,
 * tracing/start.ts), `tracingOn()` is false and every helper here returns at once: callers on
 * the hot path check it before building anything.
 */
let on = false;
let flush: (() => Promise<void>) | undefined;

export const tracingOn = (): boolean => on;

/** Called once by tracing/sdk.ts, with how to send the spans still buffered. */
export function tracingStarted(flushSpans: () => Promise<void>): void {
  on = true;
  flush = flushSpans;
  serviceTracer = undefined;
}

/** Sends the spans still buffered (a process that stops calls it before it exits); nothing when tracing is off. */
export async function flushTraces(): Promise<void> {
  await flush?.().catch(() => undefined);
}

let serviceTracer: Tracer | undefined;
/** The service's tracer (its instrumentation scope); the SDK's once registered (asked of the provider once, not per span). */
export const tracer = (): Tracer => (serviceTracer ??= trace.getTracer('workspace-api'));

/** A span context as a W3C `traceparent` (version 00). */
function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * The active span's `traceparent`: stored with the events a request writes (the outbox), and
 * sent with a delivery. Null without tracing or outside a span. An unsampled span is passed on
 * too, so that what follows from it keeps its decision.
 */
export function traceparentNow(): string | null {
  if (!on) return null;
  const span = trace.getActiveSpan();
  return span ? traceparentOf(span) : null;
}

/**
 * `fn`, to be called later from elsewhere (a queue that runs it for its caller), bound to the
 * trace context active now, so that what it does is within the caller's span; `fn` itself
 * without tracing, or outside any span (a request sampled out makes none active: binding it
 * would only make a closure a write to carry the empty context).
 */
export function inCallersContext<F extends (...args: never[]) => unknown>(fn: F): F {
  if (!on) return fn;
  const active = context.active();
  return active === ROOT_CONTEXT ? fn : context.bind(active, fn);
}

type TraceFields = { trace_id?: string; span_id?: string };
/** What a line written outside any span adds: nothing (one object, never written to). */
const NO_FIELDS: TraceFields = Object.freeze({});

/** A log line's fields for the active span (pino's mixin): `trace_id` and `span_id`, nothing outside a span. */
function traceFields(): TraceFields {
  const span = trace.getActiveSpan();
  if (!span) return NO_FIELDS;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/**
 * pino's options for traceFields: a line within a span gets its fields (the line's own win, as
 * pino's default merge does); a line outside one is written as it came, without the copy into
 * a new object pino's default merge makes of every line (most lines, when few are sampled).
 */
export const traceLogOptions = {
  mixin: traceFields,
  mixinMergeStrategy: (line: object, fields: TraceFields): object => (fields === NO_FIELDS ? line : Object.assign(fields, line)),
};

/**
 * Runs `run` in a new span, the child of `parent` (a stored `traceparent`; null: a trace of its
 * own), active for everything `run` awaits; the span ends when it settles, as an error if it
 * throws. Without tracing, `run` is called with no span.
 */
export async function inSpan<T>(name: string, options: { kind: SpanKind; parent: string | null; attributes: Attributes }, run: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!on) return run(undefined);
  const parentContext = options.parent ? propagation.extract(ROOT_CONTEXT, { traceparent: options.parent }) : ROOT_CONTEXT;
  const span = tracer().startSpan(name, { kind: options.kind, attributes: options.attributes }, parentContext);
  try {
    return await context.with(trace.setSpan(parentContext, span), () => run(span));
  } catch (err) {
    throw failed(span, err);
  } finally {
    span.end();
  }
}

/** Marks `span` as failed with `err` (its exception, its status); answers `err`, to throw again. */
export function failed(span: Span, err: unknown): unknown {
  span.recordException(err as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
  return err;
}
