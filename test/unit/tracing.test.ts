import { expect } from 'chai';
import { createContextKey, ROOT_CONTEXT, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AlwaysOnSampler, SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { ConfigError, SETTINGS } from '../../src/common/config.js';
import { contextManagerFor, framesCarryContext, PromiseContextManager } from '../../src/tracing/context.js';
import { ChildCallsOnly, samplerOf } from '../../src/tracing/sdk.js';
import { traceparentNow, tracingOn } from '../../src/tracing/tracer.js';

describe('tracing pieces', () => {
  it('builds the sampler OTEL_TRACES_SAMPLER names, with its ratio', () => {
    expect(samplerOf('parentbased_always_on', 1).toString()).to.match(/^ParentBased\{root=AlwaysOnSampler/);
    expect(samplerOf('parentbased_traceidratio', 0.1).toString()).to.match(/^ParentBased\{root=TraceIdRatioBased\{0\.1\}/);
    expect(samplerOf('parentbased_always_off', 1).toString()).to.match(/^ParentBased\{root=AlwaysOffSampler/);
    expect(samplerOf('traceidratio', 0.25).toString()).to.equal('TraceIdRatioBased{0.25}');
    expect(samplerOf('always_off', 1).toString()).to.equal('AlwaysOffSampler');
    expect(samplerOf('always_on', 1).toString()).to.equal('AlwaysOnSampler');
  });

  it('keeps a database or Redis call out of the traces unless it is within a span, and asks the configured sampler otherwise', () => {
    const sampler = new ChildCallsOnly(new AlwaysOnSampler());
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const within = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED });
    const decide = (context: typeof ROOT_CONTEXT, kind: SpanKind, attributes: Record<string, string>) => sampler.shouldSample(context, traceId, 'call', kind, attributes, []).decision;
    expect(decide(ROOT_CONTEXT, SpanKind.CLIENT, { 'db.system': 'mysql' })).to.equal(SamplingDecision.NOT_RECORD);
    expect(decide(ROOT_CONTEXT, SpanKind.CLIENT, { 'db.system.name': 'redis' })).to.equal(SamplingDecision.NOT_RECORD);
    expect(decide(within, SpanKind.CLIENT, { 'db.system': 'mysql' })).to.equal(SamplingDecision.RECORD_AND_SAMPLED);
    // A request, or a delivery attempt of an event written untraced, starts a trace.
    expect(decide(ROOT_CONTEXT, SpanKind.SERVER, {})).to.equal(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(ROOT_CONTEXT, SpanKind.CLIENT, { 'webhook.event_type': 'deal.created' })).to.equal(SamplingDecision.RECORD_AND_SAMPLED);
  });

  it('reads the OTEL_ settings strictly: a ratio from 0 to 1, an http(s) endpoint, a known sampler', () => {
    expect(SETTINGS.otelSamplerArg.read('0.1')).to.equal(0.1);
    expect(SETTINGS.otelSamplerArg.read('1')).to.equal(1);
    expect(SETTINGS.otelSamplerArg.read('0')).to.equal(0);
    expect(SETTINGS.otelSamplerArg.read(undefined)).to.equal(1);
    for (const bad of ['1.5', '-0.1', 'half', '10%', '1e-1']) expect(() => SETTINGS.otelSamplerArg.read(bad), bad).to.throw(ConfigError, /OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1/);
    expect(SETTINGS.otelEndpoint.read('https://collector.example:4318')).to.equal('https://collector.example:4318');
    expect(SETTINGS.otelEndpoint.read('')).to.equal(undefined);
    expect(() => SETTINGS.otelEndpoint.read('collector:4318')).to.throw(ConfigError, /must be an http or https URL/);
    expect(() => SETTINGS.otelEndpoint.read('not a url')).to.throw(ConfigError, /must be a URL/);
    expect(() => SETTINGS.otelProtocol.read('grpc')).to.throw(ConfigError, /must be one of http\/protobuf, http\/json/);
    expect(() => SETTINGS.otelSampler.read('sometimes')).to.throw(ConfigError);
  });

  it('says nothing of a trace while tracing is off', () => {
    expect(tracingOn()).to.equal(false);
    expect(traceparentNow()).to.equal(null);
  });

  it('tells whether V8 carries AsyncLocalStorage from how this runtime was started (Node 24, or 22.7 and later with the flag), as Node documents it', () => {
    const major = Number(process.versions.node.split('.')[0]);
    const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
    const documented = major >= 24 ? !flags.includes('--no-async-context-frame') : major >= 22 && flags.includes('--experimental-async-context-frame');
    expect(framesCarryContext()).to.equal(documented);
  });

  it("uses the SDK's AsyncLocalStorage manager where V8 carries it, the promise hooks elsewhere, and either keeps each request's context through its awaits", async () => {
    const key = createContextKey('request');
    // One at a time: the promise hooks of one manager are not installed while the other is tested.
    for (const frames of [true, false]) {
      const manager = contextManagerFor(frames);
      try {
        expect(manager).to.be.instanceOf(frames ? AsyncLocalStorageContextManager : PromiseContextManager);
        const request = (n: number) =>
          manager.with(ROOT_CONTEXT.setValue(key, n), async () => {
            const seen = [manager.active().getValue(key)];
            await new Promise((resolve) => setImmediate(resolve));
            seen.push(manager.active().getValue(key));
            await Promise.resolve();
            seen.push(manager.active().getValue(key));
            return seen;
          });
        expect(await Promise.all([request(1), request(2)])).to.deep.equal([
          [1, 1, 1],
          [2, 2, 2],
        ]);
        expect(manager.active().getValue(key)).to.equal(undefined);
      } finally {
        manager.disable();
      }
    }
  });
});
