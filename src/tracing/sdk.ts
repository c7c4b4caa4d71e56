import { SpanKind, trace, type Attributes, type Context, type Link } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { MySQL2Instrumentation } from '@opentelemetry/instrumentation-mysql2';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace-node';
import { serviceVersion, type TraceSampler } from '../common/config.js';
import { contextManagerFor } from './context.js';
import { traceSqlite } from './sqlite.js';
import { tracer, tracingStarted } from './tracer.js';

/** What tracing/start.ts read of the OTEL_ settings. */
export interface TracingSettings {
  protocol: 'http/protobuf' | 'http/json';
  serviceName: string;
  sampler: TraceSampler;
  ratio: number;
}

/** OTEL_TRACES_SAMPLER (and its argument) as the SDK's samplers. */
export function samplerOf(name: TraceSampler, ratio: number): Sampler {
  const root = name.endsWith('always_off') ? new AlwaysOffSampler() : name.endsWith('traceidratio') ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler();
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/**
 * A database or Redis call outside any span (a worker's polling, housekeeping, migrations) is
 * not a trace of its own: thousands a minute would bury the requests'. pg's and Redis's
 * instrumentations are told so (`requireParentSpan`); mysql2's has no such option, so the
 * sampler drops those, and defers to the configured one for everything else.
 */
export class ChildCallsOnly implements Sampler {
  constructor(private readonly inner: Sampler) {}

  shouldSample(context: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    if (kind === SpanKind.CLIENT && !trace.getSpanContext(context) && ('db.system' in attributes || 'db.system.name' in attributes)) return { decision: SamplingDecision.NOT_RECORD };
    return this.inner.shouldSample(context, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `ChildCallsOnly{${this.inner.toString()}}`;
  }
}


/**
 * The OpenTelemetry SDK, registered for this process: spans batched to the OTLP/HTTP exporter
 * (which reads OTEL_EXPORTER_OTLP_ENDPOINT, its headers and timeouts itself), W3C trace context
 * as the propagator, the context manager this runtime carries best (tracing/context.ts), and the drivers'
 * instrumentations.
 * OTEL_RESOURCE_ATTRIBUTES and OTEL_BSP_* are the SDK's to read as usual.
 */
export function startSdk(settings: TracingSettings): void {
  const exporter = settings.protocol === 'http/json' ? new JsonExporter() : new ProtobufExporter();
  const resource = resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': serviceVersion() }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, sampler: new ChildCallsOnly(samplerOf(settings.sampler, settings.ratio)), spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register({ contextManager: contextManagerFor() });
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [new PgInstrumentation({ requireParentSpan: true }), new MySQL2Instrumentation(), new RedisInstrumentation({ requireParentSpan: true })],
  });
  traceSqlite(tracer());
  tracingStarted(() => provider.forceFlush());
}
