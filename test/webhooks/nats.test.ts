import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { connect, type NatsConnection, type TlsOptions } from 'nats';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { runName } from '../helpers/backend.js';
import { brokerOrSkip, programOrSkip } from '../helpers/brokers.js';
import { startWorkerProcess } from '../helpers/processes.js';
import { problem } from '../helpers/problem.js';
import { localCertificate, type LocalCertificate } from '../helpers/tls.js';
import { verified } from '../helpers/receiver.js';

const FAST = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS: '0.3,0.3', WEBHOOK_TIMEOUT_SECONDS: '1', WEBHOOK_LEASE_SECONDS: '3' };
const NATS = '127.0.0.1:4222';

type Delivery = { status: string; attempts: number; last_error: string | null };

/** API.md section 16: nats://host:port/<subject> destinations, against the real NATS server (JetStream). */
describe('NATS destinations (JetStream, the server on 127.0.0.1:4222)', () => {
  let app: TestApp;
  let worker: Worker;
  let nc: NatsConnection;
  let token: string;
  // The backends' suites may run side by side against one NATS.
  const run = `t${runName()}`;
  const stream = `WSAPI_${run}`;

  before(async function () {
    await brokerOrSkip(this, 'NATS', 4222);
    nc = await connect({ servers: NATS });
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: stream, subjects: [`wsapi.${run}.>`] });
    app = await startApp({ env: FAST });
    worker = startWorker(app.deps);
    ({ token } = await app.workspaceWithKey());
  });
  after(async () => {
    await worker?.stop();
    await app?.close();
    if (nc) {
      await (await nc.jetstreamManager()).streams.delete(stream);
      await nc.close();
    }
  });

  const subscribe = async (url: string, json: Record<string, unknown> = {}) => {
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url, events: ['deal.created'], ...json } });
    expect(res.status, await res.clone().text()).to.equal(201);
    return (await res.json()) as { id: string; secret: string };
  };
  const deliveries = async (id: string) => ((await (await app.request(`/v1/webhooks/${id}/deliveries`, { token })).json()) as { data: Delivery[] }).data;

  it('publishes each delivery to JetStream: the event as its body, signed Standard Webhooks headers, acknowledged', async () => {
    const subject = `wsapi.${run}.deals`;
    const sub = await subscribe(`nats://${NATS}/${subject}`);
    const created = (await (await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Over NATS' } })).json()) as { id: string };
    await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'succeeded'), 15_000, 'the delivery acknowledged');
    const consumer = await nc.jetstream().consumers.get(stream);
    const message = await consumer.next({ expires: 5000 });
    expect(message, 'a message in the stream').to.not.equal(null);
    expect(message!.subject).to.equal(subject);
    const body = new TextDecoder().decode(message!.data);
    const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type'].map((h) => [h, message!.headers?.get(h) ?? '']));
    expect(headers['content-type']).to.equal('application/json');
    // The standardwebhooks package verifies it exactly as it verifies an HTTP delivery.
    const event = verified(sub.secret, { at: Date.now(), path: subject, headers, body, id: headers['webhook-id']! });
    expect(event.type).to.equal('deal.created');
    expect(event.data.object.id).to.equal(created.id);
    const stored = (await app.deps.db('events').where({ id: headers['webhook-id'] }).first('payload')) as { payload: string };
    expect(body).to.equal(stored.payload);
    const [delivery] = await deliveries(sub.id);
    expect(delivery).to.include({ status: 'succeeded', attempts: 1, last_error: null });
  });

  it('counts a subject no stream takes, or a server that is down, as failed attempts with their reason, retried, and the worker goes on', async () => {
    const nowhere = await subscribe(`nats://${NATS}/unstreamed.${run}`);
    const down = await subscribe('nats://127.0.0.1:1/wsapi.down');
    await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Into the void' } });
    await waitFor(async () => (await deliveries(nowhere.id)).some((d) => d.status === 'failed') && (await deliveries(down.id)).some((d) => d.status === 'failed'), 20_000, 'both deliveries failed');
    const [lost] = await deliveries(nowhere.id);
    expect(lost).to.include({ status: 'failed', attempts: 3 });
    expect(lost!.last_error).to.match(/no JetStream stream takes this subject|no acknowledgement/);
    const [refused] = await deliveries(down.id);
    expect(refused!.attempts).to.equal(3);
    expect(refused!.last_error).to.match(/NATS|ECONNREFUSED|CONNECTION_REFUSED/);
    // Still delivering: a healthy NATS subscription gets the next event.
    const ok = await subscribe(`nats://${NATS}/wsapi.${run}.after`);
    await app.request('/v1/deals', { token, method: 'POST', json: { title: 'After the failures' } });
    await waitFor(async () => (await deliveries(ok.id)).some((d) => d.status === 'succeeded'), 15_000, 'a later delivery acknowledged');
  });

  it('refuses a subject that is not one, and a private address unless allowed, naming /url', async () => {
    for (const url of [`nats://${NATS}/`, `nats://${NATS}/wsapi.*`, `nats://${NATS}/wsapi.>`, `nats://${NATS}/has%20space`]) {
      const body = await problem(await app.request('/v1/webhooks', { token, method: 'POST', json: { url, events: ['*'] } }), 422, 'validation_failed');
      expect(body.errors?.map((e) => e.pointer), url).to.deep.equal(['/url']);
    }
    const strict = await startApp();
    try {
      const { token: strictToken } = await strict.workspaceWithKey();
      const body = await problem(await strict.request('/v1/webhooks', { token: strictToken, method: 'POST', json: { url: `nats://${NATS}/wsapi.x`, events: ['*'] } }), 422, 'validation_failed');
      expect(body.errors?.[0]?.message).to.match(/loopback|public addresses only/);
    } finally {
      await strict.close();
    }
  });
});

/**
 * tls:// (NATS over TLS, NATS's own spelling): a nats-server of the test's own that takes
 * clients over TLS only, with a certificate for localhost. A worker process that does not trust
 * it fails the delivery naming the certificate; one that does (NODE_EXTRA_CA_CERTS) publishes.
 */
describe('NATS destinations over TLS (tls://, a nats-server of its own that requires TLS)', () => {
  let app: TestApp;
  let token: string;
  let certificate: LocalCertificate;
  let server: ChildProcess;
  let port: number;
  let nc: NatsConnection;
  const stream = 'WSAPI_TLS';
  const subject = 'wsapi.tls.deals';

  before(async function () {
    await brokerOrSkip(this, 'NATS', 4222);
    programOrSkip(this, 'nats-server');
    programOrSkip(this, 'openssl');
    certificate = localCertificate();
    server = spawn('nats-server', ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', certificate.dir, '--tls', '--tlscert', certificate.certFile, '--tlskey', certificate.keyFile]);
    let log = '';
    server.stderr?.on('data', (d: Buffer) => (log += d));
    await waitFor(() => /Listening for client connections on 127\.0\.0\.1:(\d+)/.test(log), 10_000, 'nats-server listening');
    port = Number(/Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(log)?.[1]);
    const tls: TlsOptions & { servername: string } = { ca: certificate.cert, servername: 'localhost' };
    nc = await connect({ servers: `127.0.0.1:${port}`, tls });
    await (await nc.jetstreamManager()).streams.add({ name: stream, subjects: ['wsapi.tls.>'] });
    app = await startApp({ env: FAST });
    ({ token } = await app.workspaceWithKey());
  });
  after(async () => {
    await app?.close();
    await nc?.close();
    server?.kill();
    certificate?.remove();
  });

  const deliveries = async (id: string) => ((await (await app.request(`/v1/webhooks/${id}/deliveries`, { token })).json()) as { data: Delivery[] }).data;

  it("checks the server's certificate against the URL's host, and publishes once it is trusted", async () => {
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `tls://user:pw@localhost:${port}/${subject}`, events: ['deal.created'] } });
    expect(res.status, await res.clone().text()).to.equal(201);
    const sub = (await res.json()) as { id: string; secret: string; url: string };
    expect(sub.url).to.equal(`tls://user@localhost:${port}/${subject}`);
    await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { url: `tls://localhost:${port}/${subject}` } });

    const untrusting = await startWorkerProcess({ ...FAST });
    try {
      await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Untrusted server' } });
      await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'failed'), 20_000, 'the delivery failed');
    } finally {
      await untrusting.stop();
    }
    const [failed] = await deliveries(sub.id);
    expect(failed!.last_error).to.match(/self[- ]signed certificate/i);

    const trusting = await startWorkerProcess({ ...FAST, NODE_EXTRA_CA_CERTS: certificate.certFile });
    try {
      const created = (await (await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Over TLS' } })).json()) as { id: string };
      await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'succeeded'), 20_000, 'the delivery acknowledged');
      const message = await (await nc.jetstream().consumers.get(stream)).next({ expires: 5000 });
      expect(message, 'a message in the stream').to.not.equal(null);
      const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, message!.headers?.get(h) ?? '']));
      const event = verified(sub.secret, { at: Date.now(), path: subject, headers, body: new TextDecoder().decode(message!.data), id: headers['webhook-id']! });
      expect(event.data.object.id).to.equal(created.id);
    } finally {
      await trusting.stop();
    }
  });
});

/** NATS's token form, nats://<token>@host: against a nats-server of the test's own that takes one token. */
describe('NATS destinations with a token (nats://<token>@host, a nats-server of its own)', () => {
  let app: TestApp;
  let worker: Worker;
  let token: string;
  let server: ChildProcess;
  let port: number;
  let nc: NatsConnection;
  let store: string;
  const secret = `tok${runName()}`;
  const subject = 'wsapi.token.deals';

  before(async function () {
    await brokerOrSkip(this, 'NATS', 4222);
    programOrSkip(this, 'nats-server');
    store = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-nats-'));
    server = spawn('nats-server', ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', store, '--auth', secret]);
    let log = '';
    server.stderr?.on('data', (d: Buffer) => (log += d));
    await waitFor(() => /Listening for client connections on 127\.0\.0\.1:(\d+)/.test(log), 10_000, 'nats-server listening');
    port = Number(/Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(log)?.[1]);
    nc = await connect({ servers: `127.0.0.1:${port}`, token: secret });
    await (await nc.jetstreamManager()).streams.add({ name: 'WSAPI_TOKEN', subjects: ['wsapi.token.>'] });
    app = await startApp({ env: FAST });
    worker = startWorker(app.deps);
    ({ token } = await app.workspaceWithKey());
  });
  after(async () => {
    await worker?.stop();
    await app?.close();
    await nc?.close();
    server?.kill();
    if (store) fs.rmSync(store, { recursive: true, force: true });
  });

  const deliveries = async (id: string) => ((await (await app.request(`/v1/webhooks/${id}/deliveries`, { token })).json()) as { data: Delivery[] }).data;

  it('connects with the token, seals it at rest and never shows it; a wrong token fails naming the refusal', async () => {
    const create = async (url: string) => {
      const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url, events: ['deal.created'] } });
      expect(res.status, await res.clone().text()).to.equal(201);
      return (await res.json()) as { id: string; url: string };
    };
    const sub = await create(`nats://${secret}@localhost:${port}/${subject}`);
    const wrong = await create(`nats://not${secret}@localhost:${port}/${subject}`);
    expect(sub.url).to.equal(`nats://localhost:${port}/${subject}`);
    expect(JSON.stringify(await (await app.request(`/v1/webhooks/${sub.id}`, { token })).json())).to.not.contain(secret);
    const row = (await app.deps.db('webhook_subscriptions').where({ id: sub.id }).first('url', 'url_password')) as { url: string; url_password: string };
    expect(row.url).to.equal(sub.url);
    expect(row.url_password).to.be.a('string').and.not.contain(secret);

    await app.request('/v1/deals', { token, method: 'POST', json: { title: 'With a token' } });
    await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'succeeded'), 15_000, 'the delivery acknowledged');
    await waitFor(async () => (await deliveries(wrong.id)).some((d) => d.status === 'failed'), 20_000, 'the wrong token failed');
    expect((await deliveries(wrong.id))[0]?.last_error).to.match(/AUTHORIZATION_VIOLATION|Authorization Violation/i);
  });
});
