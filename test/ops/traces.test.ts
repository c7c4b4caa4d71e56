import { expect } from 'chai';
import amqp from 'amqplib';
import { connect } from 'nats';
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT_DIR } from '../../src/common/config.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { isolatedDatabase, runName, usesRedis } from '../helpers/backend.js';
import { brokerOrSkip } from '../helpers/brokers.js';
import { outcomeOf, run, startServer, type ServerProcess } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

/** One span as OTLP/JSON writes it. */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number };
}

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;

/** An OTLP/HTTP collector on loopback: what the service exports, as the OpenTelemetry Collector would receive it. */
async function startCollector() {
  const spans: Array<OtlpSpan & { service: string }> = [];
  const bodies: Array<{ type: string; body: Buffer }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const type = String(req.headers['content-type']);
      bodies.push({ type, body });
      if (req.url === '/v1/traces' && type.startsWith('application/json')) {
        const sent = JSON.parse(body.toString('utf8')) as { resourceSpans: Array<{ resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
        for (const { resource, scopeSpans } of sent.resourceSpans) {
          const service = String(resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue);
          for (const scope of scopeSpans) for (const span of scope.spans) spans.push({ ...span, service });
        }
      }
      res.writeHead(200, { 'content-type': type }).end(type.startsWith('application/json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value ? (value.stringValue ?? value.intValue ?? value.boolValue) : undefined;
};
/** What a client span calls, as the instrumentations say it (older semantic conventions: `db.system`). */
const system = (span: OtlpSpan) => (span.kind === CLIENT ? (attribute(span, 'db.system.name') ?? attribute(span, 'db.system')) : undefined);

/** Is `span` within `ancestor`, through its parents in `spans`? */
function within(span: OtlpSpan, ancestor: OtlpSpan, spans: OtlpSpan[]): boolean {
  for (let parent = span.parentSpanId; parent; parent = spans.find((s) => s.spanId === parent)?.parentSpanId) if (parent === ancestor.spanId) return true;
  return false;
}

describe('Traces (OpenTelemetry, OTLP/HTTP)', function () {
  this.timeout(60_000);
  let storage: Awaited<ReturnType<typeof isolatedDatabase>>;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let receiver: Receiver;
  let seeder: TestApp;

  before(async () => {
    storage = await isolatedDatabase('traces');
    collector = await startCollector();
    receiver = await startReceiver();
    seeder = await startApp({ env: storage.env });
  });
  after(async () => {
    await seeder.close();
    await receiver.close();
    await collector.close();
    await storage.drop();
  });

  const tracedServer = (env: Record<string, string> = {}) =>
    startServer({ ...storage.env, WORKER: 'inline', WEBHOOK_ALLOW_PRIVATE: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100', ...env });

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    let server: ServerProcess;
    before(async () => {
      server = await tracedServer();
    });
    after(async () => {
      await server.stop();
    });

    it('follows one request from its incoming traceparent through the outbox to the delivery attempt, with its database and Redis calls, and its log lines', async () => {
      const { token } = await seeder.workspaceWithKey();
      const call = (path: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}) =>
        fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });
      expect((await call('/v1/webhooks', { method: 'POST', body: JSON.stringify({ url: `${receiver.url}/traced`, events: ['deal.created'] }) })).status).to.equal(201);

      const traceId = '0af7651916cd43dd8448eb211c80319c';
      const callerSpan = 'b7ad6b7169203331';
      const created = await call('/v1/deals', { method: 'POST', body: '{"title":"traced"}', headers: { traceparent: `00-${traceId}-${callerSpan}-01` } });
      expect(created.status).to.equal(201);
      const [webhook] = await receiver.waitFor(1, (r) => r.path === '/traced');

      await waitFor(() => collector.spans.some((s) => s.traceId === traceId && s.name === 'deliver deal.created'), 15_000, 'the attempt span');
      const trace = collector.spans.filter((s) => s.traceId === traceId);
      // The request: a server span named by method and route template, the caller's span its parent.
      const request = trace.find((s) => s.kind === SERVER);
      expect(request?.name).to.equal('POST /v1/deals');
      expect(request?.parentSpanId).to.equal(callerSpan);
      expect(request?.service).to.equal('workspace-api');
      expect(attribute(request!, 'http.route')).to.equal('/v1/deals');
      expect(Number(attribute(request!, 'http.response.status_code'))).to.equal(201);
      // Its database calls are within it, and its Redis calls too where there is Redis (the rate limit).
      expect(trace.filter((s) => system(s) !== undefined && system(s) !== 'redis' && within(s, request!, trace)), JSON.stringify(trace.map((s) => s.name))).to.have.length.above(0);
      if (usesRedis()) expect(trace.some((s) => system(s) === 'redis' && within(s, request!, trace)), JSON.stringify(trace.map((s) => s.name))).to.equal(true);
      // The attempt, sent by the worker after the request ended, is a span of the same trace, the request's child.
      const attempt = trace.find((s) => s.name === 'deliver deal.created')!;
      expect(attempt.kind).to.equal(CLIENT);
      expect(attempt.parentSpanId).to.equal(request!.spanId);
      expect(attribute(attempt, 'webhook.event_type')).to.equal('deal.created');
      expect(Number(attribute(attempt, 'http.response.status_code'))).to.equal(200);
      expect(attribute(attempt, 'server.address')).to.equal('127.0.0.1');
      // The webhook carries the attempt's span as W3C trace context.
      expect(webhook!.headers.traceparent).to.equal(`00-${traceId}-${attempt.spanId}-01`);
      // The request's log line names the span it was written in.
      const line = server
        .stdout()
        .split('\n')
        .filter((l) => l.includes('"msg":"request"') && l.includes('"path":"/v1/deals"') && l.includes('"method":"POST"'))
        .map((l) => JSON.parse(l) as { trace_id?: string; span_id?: string; status: number })
        .find((l) => l.status === 201);
      expect(line?.trace_id).to.equal(traceId);
      expect(line?.span_id).to.equal(request!.spanId);
    });

    it('puts W3C traceparent on NATS and RabbitMQ messages, each publication a producer span of the trace', async function () {
      await brokerOrSkip(this, 'NATS', 4222);
      await brokerOrSkip(this, 'RabbitMQ', 5672);
      const run = `t${runName()}`;
      const nc = await connect({ servers: '127.0.0.1:4222' });
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: `WSAPI_${run}`, subjects: [`wsapi.${run}.>`] });
      const broker = await amqp.connect('amqp://guest:guest@127.0.0.1:5672');
      const channel = await broker.createChannel();
      const exchange = `wsapi.${run}`;
      const consumed: amqp.ConsumeMessage[] = [];
      try {
        await channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: true });
        const { queue } = await channel.assertQueue('', { exclusive: true });
        await channel.bindQueue(queue, exchange, '#');
        await channel.consume(queue, (m) => m && consumed.push(m), { noAck: true });
        const { token } = await seeder.workspaceWithKey();
        const call = (path: string, body: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers } });
        for (const url of [`nats://127.0.0.1:4222/wsapi.${run}.deals`, `amqp://guest:guest@127.0.0.1:5672/${exchange}`]) expect((await call('/v1/webhooks', JSON.stringify({ url, events: ['deal.created'] }))).status).to.equal(201);
        const traceId = 'c0ffee00c0ffee00c0ffee00c0ffee00';
        expect((await call('/v1/deals', '{"title":"brokered"}', { traceparent: `00-${traceId}-1111111111111111-01` })).status).to.equal(201);
        await waitFor(() => consumed.length > 0, 15_000, 'the RabbitMQ message');
        await waitFor(() => collector.spans.filter((s) => s.traceId === traceId && s.kind === PRODUCER).length === 2, 15_000, 'both producer spans');
        const producers = collector.spans.filter((s) => s.traceId === traceId && s.kind === PRODUCER);
        const spanOf = (system: string) => producers.find((s) => attribute(s, 'messaging.system') === system)!;
        const onNats = await jsm.streams.getMessage(`WSAPI_${run}`, { last_by_subj: `wsapi.${run}.deals` });
        expect(onNats.header?.get('traceparent')).to.equal(`00-${traceId}-${spanOf('nats').spanId}-01`);
        expect(String(consumed[0]!.properties.headers?.traceparent)).to.equal(`00-${traceId}-${spanOf('rabbitmq').spanId}-01`);
        // Each publication is the request's child, as an HTTP attempt is.
        const request = collector.spans.find((s) => s.traceId === traceId && s.kind === SERVER)!;
        expect(producers.map((s) => s.parentSpanId)).to.deep.equal([request.spanId, request.spanId]);
      } finally {
        await jsm.streams.delete(`WSAPI_${run}`);
        await nc.close();
        await broker.close();
      }
    });

    it('keeps each of many concurrent writes in its own trace (SQLite commits them together in one transaction)', async () => {
      const { token } = await seeder.workspaceWithKey();
      const traceIds = Array.from({ length: 8 }, (_, i) => `${'d'.repeat(30)}${String(i).padStart(2, '0')}`);
      const created = await Promise.all(
        traceIds.map(async (traceId, i) => {
          const res = await fetch(`${server.url}/v1/deals`, { method: 'POST', body: JSON.stringify({ title: `concurrent ${i}` }), headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${'e'.repeat(15)}${i}-01` } });
          expect(res.status).to.equal(201);
          return ((await res.json()) as { id: string }).id;
        }),
      );
      await waitFor(() => traceIds.every((traceId) => collector.spans.some((s) => s.traceId === traceId && s.kind === SERVER)), 15_000, 'the eight server spans');
      for (const [i, traceId] of traceIds.entries()) {
        const request = collector.spans.find((s) => s.traceId === traceId && s.kind === SERVER)!;
        const [event] = (await seeder.deps.db('events').where({ object_id: created[i], type: 'deal.created' }).select('traceparent')) as Array<{ traceparent: string | null }>;
        // The event names the span of the request that wrote it, never another's written in the same transaction.
        expect(event?.traceparent).to.equal(`00-${traceId}-${request.spanId}-01`);
      }
    });

    it("follows a caller's decision not to sample: nothing of that request is exported, logged with a trace or kept with its event", async () => {
      const { token } = await seeder.workspaceWithKey();
      const traceId = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
      const res = await fetch(`${server.url}/v1/deals`, { method: 'POST', body: '{"title":"unsampled"}', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', traceparent: `00-${traceId}-bbbbbbbbbbbbbbbb-00` } });
      expect(res.status).to.equal(201);
      const { id } = (await res.json()) as { id: string };
      // A sampled request after it: once its spans are exported, the unsampled one's would have been too.
      await fetch(`${server.url}/v1/deals/${id}`, { headers: { authorization: `Bearer ${token}` } });
      await waitFor(() => collector.spans.some((s) => s.name === 'GET /v1/deals/{id}' && attribute(s, 'url.path') === `/v1/deals/${id}`), 15_000, 'the next request exported');
      expect(collector.spans.filter((s) => s.traceId === traceId)).to.deep.equal([]);
      const line = server.stdout().split('\n').find((l) => l.includes('"msg":"request"') && l.includes(`"request_id":"${res.headers.get('x-request-id')}"`));
      expect(line).to.be.a('string');
      expect(JSON.parse(line!)).not.to.have.property('trace_id');
      const events = (await seeder.deps.db('events').where({ object_id: id, type: 'deal.created' }).select('traceparent')) as Array<{ traceparent: string | null }>;
      expect(events).to.deep.equal([{ traceparent: null }]);
    });

    it('starts a trace of its own for a request without traceparent, and names a route by its template, never the raw path', async () => {
      const { token } = await seeder.workspaceWithKey();
      const missing = await fetch(`${server.url}/v1/deals/deal_nosuchdeal`, { headers: { authorization: `Bearer ${token}` } });
      expect(missing.status).to.equal(404);
      await waitFor(() => collector.spans.some((s) => s.kind === SERVER && attribute(s, 'url.path') === '/v1/deals/deal_nosuchdeal'), 15_000, 'the request span');
      const span = collector.spans.find((s) => s.kind === SERVER && attribute(s, 'url.path') === '/v1/deals/deal_nosuchdeal')!;
      expect(span.name).to.equal('GET /v1/deals/{id}');
      expect(span.parentSpanId ?? '').to.equal('');
      expect(Number(attribute(span, 'http.response.status_code'))).to.equal(404);
      // No key, no token in a span.
      expect(JSON.stringify(collector.spans)).not.to.contain(token);
    });
  });

  it('sends OTLP/HTTP protobuf by default, and follows OTEL_SERVICE_NAME', async () => {
    const server = await tracedServer({ OTEL_EXPORTER_OTLP_PROTOCOL: '', OTEL_SERVICE_NAME: 'wsapi-under-test' });
    try {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const res = await fetch(`${server.url}/v1/deals`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
      expect(res.status).to.equal(401);
    } finally {
      // A stop sends what is still buffered.
      expect(await server.stop()).to.equal(0);
    }
    const sent = collector.bodies.filter((b) => b.type === 'application/x-protobuf');
    expect(sent).to.have.length.above(0);
    // The trace id travels as its 16 bytes, the service name as its text.
    const all = Buffer.concat(sent.map((b) => b.body));
    expect(all.includes(Buffer.from('4bf92f3577b34da6a3ce929d0e0e4736', 'hex'))).to.equal(true);
    expect(all.includes(Buffer.from('wsapi-under-test'))).to.equal(true);
  });

  it('refuses a sampler or an endpoint it cannot use, in one line, before it starts', async () => {
    const sampler = await run('src/server.ts', [], { ...storage.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER: 'sometimes' });
    expect(sampler.code).to.equal(1);
    expect(sampler.stderr).to.match(/^Configuration error: OTEL_TRACES_SAMPLER: must be one of parentbased_always_on, .*got "sometimes"\n$/);
    const ratio = await run('src/server.ts', [], { ...storage.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '10%' });
    expect(ratio.stderr).to.contain('OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1, got "10%"');
    const endpoint = await run('src/worker.ts', [], { ...storage.env, OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' });
    expect(endpoint.code).to.equal(1);
    expect(endpoint.stderr).to.contain('OTEL_EXPORTER_OTLP_ENDPOINT: must be an http or https URL');
  });

  it('loads nothing of the SDK without OTEL_EXPORTER_OTLP_ENDPOINT (and all of it with)', async () => {
    // What an entry point loads before it serves: tracing first, then the server's modules.
    const script = `
      import { createRequire } from 'node:module';
      await (await import('./src/tracing/start.ts')).startTracing(process.env, 'probe');
      await import('./src/server-main.ts');
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => /@opentelemetry[\\\\/](sdk-|exporter-|instrumentation)/.test(f));
      console.log(JSON.stringify(loaded.length));`;
    const probe = (env: Record<string, string>) => outcomeOf(spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT_DIR, env: { PATH: process.env.PATH ?? '', ...storage.env, ...env } }));
    const without = await probe({});
    expect(without.stderr).to.equal('');
    expect(JSON.parse(without.stdout)).to.equal(0);
    const withIt = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    expect(JSON.parse(withIt.stdout)).to.be.above(10);
  });

  it("turns V8's allocation-site pretenuring off in a traced process, before the service loads (and leaves it on without traces)", async () => {
    // V8 prints its pretenuring feedback at each collection while the heuristic is on, and
    // nothing once it is off. Objects kept from one site across collections give it feedback.
    const script = `
      await (await import('./src/tracing/start.ts')).startTracing(process.env, 'probe');
      await import('./src/server-main.ts');
      const kept = [];
      for (let round = 0; round < 200; round++) {
        for (let i = 0; i < 2000; i++) kept.push({ i, twice: i * 2 });
        for (let j = 0; j < 8000; j++) new Array(8);
      }
      console.log('kept', kept.length);`;
    const probe = (env: Record<string, string>) =>
      outcomeOf(spawn(process.execPath, ['--trace-pretenuring-statistics', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT_DIR, env: { PATH: process.env.PATH ?? '', ...storage.env, ...env } }));
    const feedback = (stdout: string) => stdout.split('\n').filter((line) => line.includes('pretenuring:')).length;
    const without = await probe({});
    expect(without.stdout).to.contain('kept 400000');
    expect(feedback(without.stdout)).to.be.above(0);
    const withIt = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    expect(withIt.stdout).to.contain('kept 400000');
    expect(feedback(withIt.stdout)).to.equal(0);
  });
});
