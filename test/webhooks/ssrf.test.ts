import { expect } from 'chai';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { startDnsServer, type DnsServer } from '../helpers/dns.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

type Delivery = { status: string; attempts: number; last_error: string | null; last_response_status: number | null };

describe('the SSRF guard at delivery time', () => {
  let dns: DnsServer;
  let receiver: Receiver;
  let strict: TestApp;
  let lenient: TestApp;
  let worker: Worker;
  let token: string;

  before(async () => {
    dns = await startDnsServer();
    receiver = await startReceiver();
    const env = { WEBHOOK_DNS_SERVERS: dns.address, WEBHOOK_RETRY_DELAYS: '0.2', WEBHOOK_TIMEOUT_SECONDS: '1', WEBHOOK_LEASE_SECONDS: '3' };
    strict = await startApp({ env });
    // Same database, but private destinations allowed: subscriptions an operator made during
    // development, which a production worker must still refuse.
    lenient = await startApp({ env: { ...env, WEBHOOK_ALLOW_PRIVATE: 'true' } });
    worker = startWorker(strict.deps);
    ({ token } = await strict.workspaceWithKey());
  });
  after(async () => {
    await worker.stop();
    await strict.close();
    await lenient.close();
    await receiver.close();
    await dns.close();
  });

  async function deliveryOf(subscriptionId: string): Promise<Delivery> {
    await waitFor(async () => {
      const page = (await (await strict.request(`/v1/webhooks/${subscriptionId}/deliveries`, { token })).json()) as { data: Delivery[] };
      return page.data.length === 1 && page.data[0]?.status === 'failed';
    }, 10_000, 'a failed delivery');
    const page = (await (await strict.request(`/v1/webhooks/${subscriptionId}/deliveries`, { token })).json()) as { data: Delivery[] };
    return page.data[0] as Delivery;
  }

  it('refuses a name whose DNS answer changed to 127.0.0.1 after the subscription was made', async () => {
    const port = new URL(receiver.url).port;
    dns.records.set('flip.example.com', ['93.184.215.14']);
    const res = await strict.request('/v1/webhooks', { token, method: 'POST', json: { url: `https://flip.example.com:${port}/hook`, events: ['lead.created'] } });
    expect(res.status).to.equal(201);
    const sub = (await res.json()) as { id: string };
    dns.records.set('flip.example.com', ['127.0.0.1']);
    await strict.request('/v1/leads', { token, method: 'POST', json: { name: 'Rebound' } });
    const d = await deliveryOf(sub.id);
    expect(d).to.deep.include({ status: 'failed', attempts: 2, last_response_status: null });
    expect(d.last_error).to.match(/^refused: flip\.example\.com resolves to 127\.0\.0\.1/);
    expect(dns.queries.filter((q) => q.endsWith('flip.example.com')).length).to.be.greaterThan(2);
    expect(receiver.received).to.deep.equal([]);
    expect(receiver.rejected).to.deep.equal([]);
  });

  for (const host of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '[::1]', '[::ffff:127.0.0.1]', '[::7f00:1]', '[::127.0.0.1]', '[::a9fe:a9fe]']) {
    it(`refuses ${host} at delivery, even for a subscription made while private addresses were allowed`, async () => {
      const res = await lenient.request('/v1/webhooks', { token, method: 'POST', json: { url: `https://${host}:9/hook`, events: ['lead.created'] } });
      expect(res.status, await res.clone().text()).to.equal(201);
      const sub = (await res.json()) as { id: string };
      await strict.request('/v1/leads', { token, method: 'POST', json: { name: host } });
      const d = await deliveryOf(sub.id);
      expect(d.last_error).to.match(/^refused: .* is (a loopback|a private network|a link-local|an IPv4-compatible IPv6) address/);
      await strict.request(`/v1/webhooks/${sub.id}`, { token, method: 'DELETE' });
    });
  }
});
