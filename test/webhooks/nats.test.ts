import { expect } from 'chai';
import { connect, type NatsConnection } from 'nats';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { runName } from '../helpers/backend.js';
import { brokerOrSkip } from '../helpers/brokers.js';
import { problem } from '../helpers/problem.js';
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
