import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createUser } from '../../src/admin/users.js';
import { createKey, createWorkspace } from '../../src/auth/keys.js';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { shootFailure, signedInPage, suiteBrowser } from '../helpers/browser.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

/** A per_object webhook made on the Developer page, and its held deliveries there (docs/reference.md section 20). */
describe('the Developer page, in Chromium: ordered delivery', function () {
  this.timeout(90_000);
  let browser: Browser;
  let app: TestApp;
  let worker: Worker;
  let receiver: Receiver;
  let context: BrowserContext | undefined;
  let page: Page;
  let shots = '';

  before(async function () {
    this.timeout(120_000);
    ({ browser, shots } = await suiteBrowser(this));
    receiver = await startReceiver();
    // Retries enough that a failing delivery holds its line through the test.
    app = await startApp({ env: fastWebhooks({ WEBHOOK_RETRY_DELAYS: Array.from({ length: 10 }, () => '1').join(',') }) });
    worker = startWorker(app.deps);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await worker?.stop();
    await app?.close();
    await receiver?.close();
  });
  afterEach(async function () {
    await shootFailure(this.currentTest, page, shots);
  });

  it('makes a webhook ordered per object, and shows a held delivery and the one it waits behind', async () => {
    const workspace = (await createWorkspace(app.deps.db, { name: 'Ordering', plan: 'pro' })).id;
    const person = await createUser(app.deps.db, { workspace, email: `ordering.${Date.now().toString(36)}@example.com`, role: 'admin' });
    ({ context, page } = await signedInPage(browser, app.url, person, '#/webhooks/new'));
    await page.getByLabel('URL').fill(`${receiver.url}/ordered`);
    await page.getByLabel('Order').selectOption('per_object');
    await page.getByRole('checkbox', { name: 'Every client event (client.*)' }).check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    receiver.secrets.set('/ordered', [await page.getByRole('textbox', { name: 'Secret' }).inputValue()]);
    await page.getByRole('link', { name: 'Go to the webhook' }).click();
    await page.getByText("Per object: one object's events in the order of its versions").waitFor();
    const webhookId = page.url().split('/').pop()!;
    const stored = (await app.deps.db('webhook_subscriptions').first('ordering').where({ id: webhookId })) as { ordering: string };
    expect(stored.ordering).to.equal('per_object');

    // A client created, then renamed twice; the receiver refuses its creation, so both renames wait.
    receiver.respond = (r) => ({ status: r.body.includes('"client.created"') ? 503 : 200 });
    const { token } = await createKey(app.deps.db, ['read:clients', 'write:clients'], { workspace, name: 'writer', scopes: ['read:clients', 'write:clients'], rate_limit: 6000 });
    const client = (await (await app.request('/v1/clients', { token, method: 'POST', json: { name: 'Held' } })).json()) as { id: string };
    for (const name of ['Held 2', 'Held 3']) expect((await app.request(`/v1/clients/${client.id}`, { token, method: 'PATCH', json: { name } })).status).to.equal(200);

    await page.getByLabel('Status').selectOption('held');
    const deliveries = page.getByRole('region', { name: 'Deliveries' });
    await deliveries.getByRole('row').filter({ hasText: 'held' }).nth(1).waitFor({ timeout: 30_000 });
    const head = (await app.deps.db('webhook_deliveries').first('id').where({ subscription_id: webhookId, event_type: 'client.created' })) as { id: string };
    expect(await deliveries.getByRole('link', { name: head.id, exact: true }).count()).to.equal(2);
    await page.screenshot({ path: path.join(shots, '31-webhook-held.png'), fullPage: true });

    // The receiver takes it: the line runs, and nothing is held.
    receiver.respond = () => ({ status: 200 });
    await page.getByLabel('Status').selectOption('succeeded');
    await deliveries.getByRole('row').filter({ hasText: 'client.updated' }).filter({ hasText: 'succeeded' }).nth(1).waitFor({ timeout: 30_000 });
    const order = receiver.received.filter((r) => r.path === '/ordered' && r.body.includes(client.id)).map((r) => (JSON.parse(r.body) as { data: { object: { version: number } } }).data.object.version);
    expect(order.filter((v) => v > 1)).to.deep.equal([2, 3]);
    expect(order.indexOf(2)).to.be.greaterThan(order.lastIndexOf(1));
  });
});
