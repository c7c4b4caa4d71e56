import { expect } from 'chai';
import { connect, type NatsConnection, type TlsOptions } from 'nats';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { runName } from '../helpers/backend.js';
import { brokerOrSkip, programOrSkip, startNatsServer, type NatsServer } from '../helpers/brokers.js';
import { migratedDatabase, withWorkerProcess } from '../helpers/processes.js';
import { problem } from '../helpers/problem.js';
import { localCertificate, type LocalCertificate } from '../helpers/tls.js';
import { deliveriesOf, verified } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

// Two retries: a delivery to a broker that is down is given up after three attempts.
const FAST = fastWebhooks({ WEBHOOK_RETRY_DELAYS: '0.3,0.3' });
const NATS = '127.0.0.1:4222';

/**
 * The last message of `stream` on `subject` (a direct get, whatever else the stream holds),
 * verified as the standardwebhooks package verifies an HTTP delivery (with `secret`): the
 * event, its body and its headers.
 */
async function lastEvent(nc: NatsConnection, stream: string, subject: string, secret: string) {
  const message = await (await nc.jetstreamManager()).streams.getMessage(stream, { last_by_subj: subject });
  expect(message.subject).to.equal(subject);
  const body = new TextDecoder().decode(message.data);
  const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type'].map((h) => [h, message.header?.get(h) ?? '']));
  return { event: verified(secret, { at: Date.now(), path: subject, headers, body, id: headers['webhook-id']! }), body, headers };
}

/** docs/reference.md section 16: nats://host:port/<subject> destinations, against the real NATS server (JetStream). */
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
  const deliveries = (id: string) => deliveriesOf(app, token, id);

  it('publishes each delivery to JetStream: the event as its body, signed Standard Webhooks headers, acknowledged', async () => {
    const subject = `wsapi.${run}.deals`;
    const sub = await subscribe(`nats://${NATS}/${subject}`);
    const created = (await (await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Over NATS' } })).json()) as { id: string };
    await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'succeeded'), 15_000, 'the delivery acknowledged');
    const { event, body, headers } = await lastEvent(nc, stream, subject, sub.secret);
    expect(headers['content-type']).to.equal('application/json');
    expect(event.type).to.equal('deal.created');
    expect(event.data.object.id).to.equal(created.id);
    const stored = (await app.deps.db('events').where({ id: headers['webhook-id'] }).first('payload')) as { payload: string };
    expect(body).to.equal(stored.payload);
    const [delivery] = await deliveries(sub.id);
    expect(delivery).to.include({ status: 'succeeded', attempts: 1, last_error: null });
  });

  it("keeps each subscription's copy of an event in one stream, and drops a copy it already holds", async () => {
    const [a, b] = [await subscribe(`nats://${NATS}/wsapi.${run}.copy.a`), await subscribe(`nats://${NATS}/wsapi.${run}.copy.b`)];
    const created = (await (await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Twice' } })).json()) as { id: string };
    for (const sub of [a, b]) await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'succeeded'), 15_000, 'both deliveries acknowledged');
    const [first, second] = [await lastEvent(nc, stream, `wsapi.${run}.copy.a`, a.secret), await lastEvent(nc, stream, `wsapi.${run}.copy.b`, b.secret)];
    expect([first.event.data.object.id, second.event.data.object.id]).to.deep.equal([created.id, created.id]);
    expect(first.headers['webhook-id']).to.equal(second.headers['webhook-id']);
    // The same delivery published again (a retry after a lost acknowledgement) is one JetStream already holds.
    const [delivery] = (await (await app.request(`/v1/webhooks/${a.id}/deliveries`, { token })).json() as { data: Array<{ id: string }> }).data;
    const before = (await (await nc.jetstreamManager()).streams.info(stream)).state.messages;
    expect((await app.request(`/v1/webhooks/${a.id}/deliveries/${delivery!.id}/retry`, { token, method: 'POST' })).status).to.equal(202);
    await waitFor(async () => ((await (await app.request(`/v1/webhooks/${a.id}/deliveries/${delivery!.id}`, { token })).json()) as { attempts: unknown[] }).attempts.length === 2, 15_000, 'the retried attempt');
    const attempts = ((await (await app.request(`/v1/webhooks/${a.id}/deliveries/${delivery!.id}`, { token })).json()) as { attempts: Array<{ response_excerpt: string | null }> }).attempts;
    expect(attempts[0]?.response_excerpt).to.match(/\(already there\)$/);
    expect((await (await nc.jetstreamManager()).streams.info(stream)).state.messages).to.equal(before);
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
describe('NATS destinations over TLS (tls://, a nats-server of its own that requires TLS)', function () {
  // Two worker processes start and stop, on a database of the describe's own.
  this.timeout(120_000);
  let storage: Awaited<ReturnType<typeof migratedDatabase>>;
  let app: TestApp;
  let token: string;
  let certificate: LocalCertificate;
  let server: NatsServer;
  let nc: NatsConnection;
  const stream = 'WSAPI_TLS';
  const subject = 'wsapi.tls.deals';

  before(async function () {
    await brokerOrSkip(this, 'NATS', 4222);
    programOrSkip(this, 'nats-server');
    programOrSkip(this, 'openssl');
    certificate = localCertificate();
    server = await startNatsServer(['--tls', '--tlscert', certificate.certFile, '--tlskey', certificate.keyFile]);
    const tls: TlsOptions & { servername: string } = { ca: certificate.cert, servername: 'localhost' };
    nc = await connect({ servers: `127.0.0.1:${server.port}`, tls });
    await (await nc.jetstreamManager()).streams.add({ name: stream, subjects: ['wsapi.tls.>'] });
    storage = await migratedDatabase('natstls');
    app = await startApp({ env: { ...FAST, ...storage.env } });
    ({ token } = await app.workspaceWithKey());
  });
  after(async () => {
    await app?.close();
    await storage?.drop();
    await nc?.close();
    await server?.stop();
    certificate?.remove();
  });

  const deliveries = (id: string) => deliveriesOf(app, token, id);

  const subscribeTo = async (url: string) => {
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url, events: ['deal.created'] } });
    expect(res.status, await res.clone().text()).to.equal(201);
    return (await res.json()) as { id: string; secret: string; url: string };
  };

  it("checks the server's certificate against the URL's host, and publishes once it is trusted", async () => {
    const sub = await subscribeTo(`tls://user:pw@localhost:${server.port}/${subject}`);
    expect(sub.url).to.equal(`tls://user@localhost:${server.port}/${subject}`);
    await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { url: `tls://localhost:${server.port}/${subject}` } });

    await withWorkerProcess({ ...FAST, ...storage.env }, async () => {
      await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Untrusted server' } });
      await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'failed'), 20_000, 'the delivery failed');
    });
    expect((await deliveries(sub.id))[0]?.last_error).to.match(/self[- ]signed certificate/i);

    // nats:// takes TLS too when the server offers it, the certificate checked against the URL's
    // host: localhost is the certificate's name, 127.0.0.1 is not.
    const byName = await subscribeTo(`nats://localhost:${server.port}/wsapi.tls.named`);
    const byAddress = await subscribeTo(`nats://127.0.0.1:${server.port}/wsapi.tls.address`);
    await withWorkerProcess({ ...FAST, ...storage.env, NODE_EXTRA_CA_CERTS: certificate.certFile }, async () => {
      const created = (await (await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Over TLS' } })).json()) as { id: string };
      await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'succeeded'), 20_000, 'the delivery acknowledged');
      expect((await lastEvent(nc, stream, subject, sub.secret)).event.data.object.id).to.equal(created.id);
      await waitFor(async () => (await deliveries(byName.id)).some((d) => d.status === 'succeeded'), 20_000, 'the nats:// delivery acknowledged over TLS');
      await waitFor(async () => (await deliveries(byAddress.id)).some((d) => d.status === 'failed'), 20_000, 'the nats:// delivery to an address the certificate does not name failed');
    });
    expect((await deliveries(byAddress.id))[0]?.last_error).to.match(/IP: 127\.0\.0\.1 is not in the cert's list/);
  });
});

/** NATS's token form, nats://<token>@host: against a nats-server of the test's own that takes one token. */
describe('NATS destinations with a token (nats://<token>@host, a nats-server of its own)', () => {
  let app: TestApp;
  let worker: Worker;
  let token: string;
  let server: NatsServer;
  let nc: NatsConnection;
  const secret = `tok${runName()}`;
  const subject = 'wsapi.token.deals';

  before(async function () {
    await brokerOrSkip(this, 'NATS', 4222);
    programOrSkip(this, 'nats-server');
    server = await startNatsServer(['--auth', secret]);
    nc = await connect({ servers: `127.0.0.1:${server.port}`, token: secret });
    await (await nc.jetstreamManager()).streams.add({ name: 'WSAPI_TOKEN', subjects: ['wsapi.token.>'] });
    app = await startApp({ env: FAST });
    worker = startWorker(app.deps);
    ({ token } = await app.workspaceWithKey());
  });
  after(async () => {
    await worker?.stop();
    await app?.close();
    await nc?.close();
    await server?.stop();
  });

  const deliveries = (id: string) => deliveriesOf(app, token, id);

  it('connects with the token, seals it at rest and never shows it; a wrong token fails naming the refusal', async () => {
    const create = async (url: string) => {
      const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url, events: ['deal.created'] } });
      expect(res.status, await res.clone().text()).to.equal(201);
      return (await res.json()) as { id: string; url: string };
    };
    const sub = await create(`nats://${secret}@localhost:${server.port}/${subject}`);
    const wrong = await create(`nats://not${secret}@localhost:${server.port}/${subject}`);
    expect(sub.url).to.equal(`nats://localhost:${server.port}/${subject}`);
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
