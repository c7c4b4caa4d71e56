import { expect } from 'chai';
import parsePrometheusTextFormat, { type Family } from 'parse-prometheus-text-format';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { isolatedDatabase } from '../helpers/backend.js';
import { freePort, startServer, startWorkerProcess, type ServerProcess } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

let lastText = '';

/** One scrape, parsed by a Prometheus text parser we did not write. */
async function scrape(port: number): Promise<Map<string, Family>> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).to.equal(200);
  expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
  lastText = await res.text();
  return new Map(parsePrometheusTextFormat(lastText).map((f) => [f.name, f]));
}

/** A histogram's count for exactly these labels, read off the text (the parser merges labelled histograms). */
function histogramCount(name: string, labels = ''): number | undefined {
  const line = lastText.split('\n').find((l) => l.startsWith(`${name}_count${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

/** The value of the sample of `name` whose labels include `labels`. */
function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const sample = families.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample === undefined ? undefined : Number(sample.value ?? sample.count);
}

describe('metrics on METRICS_PORT (Prometheus text format), from the server and a worker', function () {
  this.timeout(60_000);
  let seeder: TestApp;
  let server: ServerProcess;
  let receiver: Receiver;
  let port: number;
  // The inline worker counts every delivery it makes: a database of its own keeps the other tests' out of the counts.
  let storage: Awaited<ReturnType<typeof isolatedDatabase>>;

  before(async () => {
    storage = await isolatedDatabase('metrics');
    receiver = await startReceiver();
    port = await freePort();
    server = await startServer({ ...storage.env, METRICS_PORT: String(port), WORKER: 'inline', WEBHOOK_ALLOW_PRIVATE: 'true' });
    seeder = await startApp({ env: storage.env });
  });
  after(async () => {
    await server.stop();
    await seeder.close();
    await receiver.close();
    await storage.drop();
  });

  it('counts known requests by route template, method and status, the 401s, and a delivery with its duration', async () => {
    const { token } = await seeder.workspaceWithKey();
    const call = (path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
    for (let i = 0; i < 3; i += 1) expect((await call('/v1/deals?limit=1')).status).to.equal(200);
    expect((await call('/v1/deals/deal_doesnotexist')).status).to.equal(404);
    for (let i = 0; i < 2; i += 1) expect((await fetch(`${server.url}/v1/deals`)).status).to.equal(401);
    const hook = await call('/v1/webhooks', { method: 'POST', body: JSON.stringify({ url: `${receiver.url}/metrics`, events: ['deal.created'] }) });
    expect(hook.status).to.equal(201);
    expect((await call('/v1/deals', { method: 'POST', body: '{"title":"measured"}' })).status).to.equal(201);
    await receiver.waitFor(1, (r) => r.path === '/metrics');
    // Outside the routers: the probes and the Developer page are named by what answers them.
    expect((await fetch(`${server.url}/readyz`)).status).to.equal(200);
    await fetch(`${server.url}/admin/app.js?v=1`);

    let families = await scrape(port);
    await waitFor(async () => {
      families = await scrape(port);
      return value(families, 'wsapi_webhook_deliveries_total', { outcome: 'succeeded' }) === 1;
    }, 10_000, 'the delivery to be counted');
    expect(value(families, 'wsapi_http_requests_total', { route: '/v1/deals', method: 'GET', status: '200' })).to.equal(3);
    expect(value(families, 'wsapi_http_requests_total', { route: '/v1/deals/{id}', method: 'GET', status: '404' })).to.equal(1);
    expect(value(families, 'wsapi_http_requests_total', { route: '/v1/deals', method: 'POST', status: '201' })).to.equal(1);
    expect(value(families, 'wsapi_http_unauthorized_total')).to.equal(2);
    // Refused before any router matched: not a route of its own.
    expect(value(families, 'wsapi_http_requests_total', { route: 'unmatched', method: 'GET', status: '401' })).to.equal(2);
    expect(value(families, 'wsapi_http_requests_total', { route: '/readyz', method: 'GET', status: '200' })).to.equal(1);
    expect(value(families, 'wsapi_http_requests_total', { route: '/admin/*', method: 'GET' })).to.equal(1);
    expect(value(families, 'wsapi_http_rate_limited_total')).to.equal(0);
    expect(histogramCount('wsapi_http_request_duration_seconds', 'route="/v1/deals",method="GET"')).to.equal(3);
    expect(histogramCount('wsapi_webhook_delivery_duration_seconds')).to.equal(1);
    expect(families.get('wsapi_webhook_deliveries_due')?.type).to.equal('GAUGE');
    expect(value(families, 'wsapi_events_awaiting_fanout')).to.be.a('number');
    // The inline worker's round that fanned out the event and sent its delivery found work.
    expect(value(families, 'wsapi_webhook_worker_rounds_total', { found: 'some' })).to.be.at.least(1);
    expect(value(families, 'wsapi_webhook_oldest_due_age_seconds')).to.be.at.least(0);
    expect(value(families, 'wsapi_rate_limiter_fallback')).to.equal(0);
    expect(value(families, 'wsapi_process_cpu_user_seconds_total')).to.be.greaterThan(0);
    // Bounded labels: templates, never a raw path, an id or a token.
    const labels = [...families.values()].flatMap((f) => f.metrics.flatMap((m) => Object.values(m.labels ?? {})));
    expect(labels.filter((l) => /deal_|wsk_|key_/.test(l))).to.deep.equal([]);
  });

  it('serves only GET /metrics, and a worker process serves its own', async () => {
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).to.equal(404);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status).to.equal(404);
    const workerPort = await freePort();
    const worker = await startWorkerProcess({ ...storage.env, METRICS_PORT: String(workerPort) });
    try {
      let families = new Map<string, Family>();
      await waitFor(async () => {
        families = await scrape(workerPort).catch(() => new Map());
        return families.size > 0;
      }, 10_000, 'the worker to serve metrics');
      expect(value(families, 'wsapi_webhook_deliveries_due')).to.be.a('number');
      expect(families.has('wsapi_webhook_deliveries_total')).to.equal(true);
      expect(families.get('wsapi_webhook_worker_rounds_total')?.type).to.equal('COUNTER');
    } finally {
      expect(await worker.stop()).to.equal(0);
    }
  });
});
