import net from 'node:net';
import tls from 'node:tls';
import { expect } from 'chai';
import amqp from 'amqplib';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { runName } from '../helpers/backend.js';
import { brokerOrSkip, programOrSkip } from '../helpers/brokers.js';
import { migratedDatabase, withWorkerProcess } from '../helpers/processes.js';
import { problem } from '../helpers/problem.js';
import { localCertificate, type LocalCertificate } from '../helpers/tls.js';
import { deliveriesOf, verified } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

// Two retries (a failing delivery is given up after three attempts), and a broker's slower connect.
const FAST = fastWebhooks({ WEBHOOK_RETRY_DELAYS: '0.3,0.3', WEBHOOK_TIMEOUT_SECONDS: '2', WEBHOOK_LEASE_SECONDS: '4' });
const BROKER = 'amqp://guest:guest@127.0.0.1:5672';

type Sub = { id: string; secret: string; url: string };

/** docs/reference.md section 16: amqp://user:pass@host:port/<exchange> destinations, against the real RabbitMQ (publisher confirms). */
describe('RabbitMQ destinations (the broker on 127.0.0.1:5672)', () => {
  let app: TestApp;
  let worker: Worker;
  let connection: amqp.ChannelModel;
  let channel: amqp.Channel;
  let token: string;
  // The backends' suites may run side by side against one RabbitMQ.
  const exchange = `wsapi.${runName()}`;
  const received: amqp.ConsumeMessage[] = [];

  before(async function () {
    await brokerOrSkip(this, 'RabbitMQ', 5672);
    connection = await amqp.connect(BROKER);
    channel = await connection.createChannel();
    await channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: true });
    const { queue } = await channel.assertQueue('', { exclusive: true });
    await channel.bindQueue(queue, exchange, '#');
    await channel.consume(queue, (m) => m && received.push(m), { noAck: true });
    app = await startApp({ env: FAST });
    worker = startWorker(app.deps);
    ({ token } = await app.workspaceWithKey());
  });
  after(async () => {
    await worker?.stop();
    await app?.close();
    await connection?.close();
  });

  const subscribe = async (url: string) => {
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url, events: ['deal.created', 'deal.updated'] } });
    expect(res.status, await res.clone().text()).to.equal(201);
    return (await res.json()) as Sub;
  };
  const deliveries = (id: string) => deliveriesOf(app, token, id);

  it('publishes each delivery to the exchange (routing key: the event type), signed, confirmed; the password sealed and never shown', async () => {
    const sub = await subscribe(`${BROKER}/${exchange}`);
    expect(sub.url).to.equal(`amqp://guest@127.0.0.1:5672/${exchange}`);
    expect(JSON.stringify(await (await app.request(`/v1/webhooks/${sub.id}`, { token })).json())).to.not.contain('guest:guest');
    const row = (await app.deps.db('webhook_subscriptions').where({ id: sub.id }).first('url', 'url_password')) as { url: string; url_password: string };
    expect(row.url).to.not.contain(':guest@');
    expect(row.url_password).to.be.a('string').and.not.equal('guest');
    const audit = JSON.stringify(await app.deps.db('audit_log').where({ target_id: sub.id }));
    expect(audit).to.not.contain('guest:guest');

    const created = (await (await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Over AMQP' } })).json()) as { id: string };
    await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'succeeded'), 15_000, 'the delivery confirmed');
    await waitFor(() => received.length > 0, 5000, 'the message consumed');
    const [m] = received;
    expect(m!.fields.routingKey).to.equal('deal.created');
    expect(m!.properties.contentType).to.equal('application/json');
    const headers = m!.properties.headers as Record<string, string>;
    const body = m!.content.toString('utf8');
    const event = verified(sub.secret, { at: Date.now(), path: exchange, headers, body, id: headers['webhook-id']! });
    expect(event.data.object.id).to.equal(created.id);
    expect(m!.properties.messageId).to.equal(headers['webhook-id']);
  });

  it('counts a missing exchange, a refused login or a broker that is down as failed attempts with their reason, and goes on', async () => {
    const missing = await subscribe(`${BROKER}/wsapi.missing.${Date.now().toString(36)}`);
    const refused = await subscribe(`amqp://guest:wrong@127.0.0.1:5672/${exchange}`);
    const down = await subscribe(`amqp://guest:guest@127.0.0.1:1/${exchange}`);
    await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Nowhere to go' } });
    for (const sub of [missing, refused, down]) {
      await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'failed'), 20_000, `the delivery to ${sub.url} failed`);
      const [d] = await deliveries(sub.id);
      expect(d!.attempts, sub.url).to.equal(3);
      expect(d!.last_error, sub.url).to.match(/^AMQP /);
    }
    const ok = await subscribe(`${BROKER}/${exchange}`);
    await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Later' } });
    await waitFor(async () => (await deliveries(ok.id)).some((d) => d.status === 'succeeded'), 15_000, 'a later delivery confirmed');
  });

  it('publishes on the vhost the URL names before the exchange (%2F for /); a vhost the broker lacks fails naming it', async () => {
    const explicit = await subscribe(`${BROKER}/%2F/${exchange}`);
    expect(explicit.url).to.equal(`amqp://guest@127.0.0.1:5672/%2F/${exchange}`);
    const missing = await subscribe(`${BROKER}/wsapi-no-such-vhost/${exchange}`);
    const before = received.length;
    await app.request('/v1/deals', { token, method: 'POST', json: { title: 'On a vhost' } });
    await waitFor(async () => (await deliveries(explicit.id)).some((d) => d.status === 'succeeded'), 15_000, 'the delivery on vhost / confirmed');
    await waitFor(() => received.length > before, 5000, 'the message consumed');
    await waitFor(async () => (await deliveries(missing.id)).some((d) => d.status === 'failed'), 20_000, 'the delivery to a missing vhost failed');
    expect((await deliveries(missing.id))[0]?.last_error).to.equal("AMQP the broker refused to open vhost wsapi-no-such-vhost (is there such a vhost, and may guest use it?)");
  });

  it('refuses an exchange name that is not one, or a URL that does not decode, naming /url, and changes the password with the URL', async () => {
    for (const url of [`${BROKER}/`, `${BROKER}/has%20space`, `${BROKER}/${'x'.repeat(128)}`, `${BROKER}/ex?x=1`, `${BROKER}/a/b/c`, `${BROKER}//ex`, `${BROKER}/%E0`, 'amqp://g:%E0@127.0.0.1:5672/ex', 'nats://127.0.0.1:4222/%E0', 'https://u:%E0@example.com/hook']) {
      const body = await problem(await app.request('/v1/webhooks', { token, method: 'POST', json: { url, events: ['*'] } }), 422, 'validation_failed');
      expect(body.errors?.map((e) => e.pointer), url).to.deep.equal(['/url']);
    }
    const sub = await subscribe(`${BROKER}/${exchange}`);
    const res = await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { url: `amqp://other:pw2@127.0.0.1:5672/${exchange}` } });
    expect(((await res.json()) as Sub).url).to.equal(`amqp://other@127.0.0.1:5672/${exchange}`);
    const row = (await app.deps.db('webhook_subscriptions').where({ id: sub.id }).first('url_password')) as { url_password: string };
    expect(row.url_password).to.not.contain('pw2');
  });
});

/**
 * amqps:// (AMQP over TLS), as managed brokers require: a TLS proxy with a certificate for
 * localhost stands in front of the real RabbitMQ. A worker process that does not trust the
 * certificate fails the delivery naming it; one that does (NODE_EXTRA_CA_CERTS, as an operator
 * adds a private CA) delivers through the proxy.
 */
describe('RabbitMQ destinations over TLS (amqps://, a TLS proxy in front of 127.0.0.1:5672)', function () {
  // Two worker processes start and stop, on a database of the describe's own.
  this.timeout(120_000);
  let storage: Awaited<ReturnType<typeof migratedDatabase>>;
  let app: TestApp;
  let token: string;
  let proxy: tls.Server;
  let port: number;
  let certificate: LocalCertificate;
  let connection: amqp.ChannelModel;
  /** The host name each TLS handshake asked for (SNI), and the handshakes that succeeded. */
  const asked: string[] = [];
  let secured = 0;
  const exchange = `wsapi.tls.${runName()}`;
  const received: amqp.ConsumeMessage[] = [];

  before(async function () {
    await brokerOrSkip(this, 'RabbitMQ', 5672);
    programOrSkip(this, 'openssl');
    certificate = localCertificate();
    const SNICallback = (name: string, done: (err: Error | null, context?: tls.SecureContext) => void) => {
      asked.push(name);
      done(null);
    };
    proxy = tls.createServer({ key: certificate.key, cert: certificate.cert, SNICallback }, (socket) => {
      secured++;
      const broker = net.connect(5672, '127.0.0.1');
      socket.pipe(broker).pipe(socket);
      socket.on('error', () => broker.destroy());
      broker.on('error', () => socket.destroy());
    });
    proxy.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    port = (proxy.address() as net.AddressInfo).port;
    connection = await amqp.connect(BROKER);
    const channel = await connection.createChannel();
    await channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: true });
    const { queue } = await channel.assertQueue('', { exclusive: true });
    await channel.bindQueue(queue, exchange, '#');
    await channel.consume(queue, (m) => m && received.push(m), { noAck: true });
    storage = await migratedDatabase('amqps');
    app = await startApp({ env: { ...FAST, ...storage.env } });
    ({ token } = await app.workspaceWithKey());
  });
  after(async () => {
    await app?.close();
    await storage?.drop();
    await connection?.close();
    proxy?.close();
    certificate?.remove();
  });

  const deliveries = (id: string) => deliveriesOf(app, token, id);

  it("checks the broker's certificate against the URL's host, and delivers once it is trusted", async () => {
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `amqps://guest:guest@localhost:${port}/${exchange}`, events: ['deal.created'] } });
    expect(res.status, await res.clone().text()).to.equal(201);
    const sub = (await res.json()) as Sub;
    expect(sub.url).to.equal(`amqps://guest@localhost:${port}/${exchange}`);

    // A worker that does not trust the certificate: the attempts fail, naming it; nothing reaches the exchange.
    await withWorkerProcess({ ...FAST, ...storage.env }, async () => {
      await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Untrusted broker' } });
      await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'failed'), 20_000, 'the delivery failed');
    });
    expect((await deliveries(sub.id))[0]?.last_error).to.match(/^AMQP .*self[- ]signed certificate/i);
    expect(received).to.have.length(0);
    expect(asked.length).to.be.greaterThan(0);
    expect(asked.every((name) => name === 'localhost')).to.equal(true);
    expect(secured).to.equal(0);

    // A worker that trusts it delivers through TLS, signed as over amqp://.
    await withWorkerProcess({ ...FAST, ...storage.env, NODE_EXTRA_CA_CERTS: certificate.certFile }, async () => {
      const created = (await (await app.request('/v1/deals', { token, method: 'POST', json: { title: 'Over TLS' } })).json()) as { id: string };
      await waitFor(async () => (await deliveries(sub.id)).some((d) => d.status === 'succeeded'), 20_000, 'the delivery confirmed');
      await waitFor(() => received.length > 0, 5000, 'the message consumed');
      const [m] = received;
      const headers = m!.properties.headers as Record<string, string>;
      const event = verified(sub.secret, { at: Date.now(), path: exchange, headers, body: m!.content.toString('utf8'), id: headers['webhook-id']! });
      expect(event.data.object.id).to.equal(created.id);
      expect(secured).to.be.greaterThan(0);
    });
  });

  it('refuses an amqps URL without an exchange, as an amqp one', async () => {
    const body = await problem(await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `amqps://guest:guest@localhost:${port}/`, events: ['*'] } }), 422, 'validation_failed');
    expect(body.errors?.map((e) => e.pointer)).to.deep.equal(['/url']);
  });
});
