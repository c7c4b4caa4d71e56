import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createUser } from '../../src/admin/users.js';
import { createKey, createWorkspace } from '../../src/auth/keys.js';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startJobRunner } from '../../src/jobs.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { shootFailure, signedInPage, suiteBrowser } from '../helpers/browser.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

/** The Live / Test switch of the Developer page (docs/reference.md section 21). */
describe('the Developer page, in Chromium: the Live / Test switch', function () {
  this.timeout(60_000);
  let browser: Browser;
  let app: TestApp;
  let worker: Worker;
  let receiver: Receiver;
  let context: BrowserContext | undefined;
  let page: Page;
  let shots = '';
  let workspaceId: string;
  let jobs: { stop(): Promise<void> } | undefined;

  before(async function () {
    ({ browser, shots } = await suiteBrowser(this));
    receiver = await startReceiver();
    app = await startApp({ env: fastWebhooks({ TRUST_PROXY: 'true', USAGE_FLUSH_SECONDS: '1' }) });
    worker = startWorker(app.deps);
    jobs = startJobRunner(app.deps, app.registry);
    workspaceId = (await createWorkspace(app.deps.db, { name: 'Modes', plan: 'pro' })).id;
    const person = await createUser(app.deps.db, { workspace: workspaceId, email: `modes.${Date.now().toString(36)}@example.com`, role: 'admin' });
    ({ context, page } = await signedInPage(browser, app.url, person, '#/keys'));
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await jobs?.stop();
    await worker?.stop();
    await app?.close();
    await receiver?.close();
  });
  afterEach(async function () {
    await shootFailure(this.currentTest, page, shots);
  });

  const keyRows = () => page.getByRole('table', { name: 'API keys' }).getByRole('row');

  it('makes a test key in test mode, listed there and not among the live keys', async () => {
    await createKey(app.deps.db, ['read:deals'], { workspace: workspaceId, name: 'Live one', scopes: ['read:deals'] });
    await page.reload();
    await keyRows().filter({ hasText: 'Live one' }).waitFor();
    const toggle = page.getByRole('switch', { name: 'Test mode' });
    expect(await toggle.getAttribute('aria-checked')).to.equal('false');
    await toggle.click();
    await page.getByRole('status').filter({ hasText: 'Test mode' }).waitFor();
    expect(new URL(page.url()).hash).to.equal('#/test/keys');
    expect(await page.getByRole('switch', { name: 'Test mode' }).getAttribute('aria-checked')).to.equal('true');
    await page.getByText('No keys yet.').waitFor();
    await page.getByRole('link', { name: 'Create key' }).click();
    await page.getByLabel('Name').fill('Sandbox');
    await page.getByRole('checkbox', { name: 'read:deals' }).check();
    await page.getByRole('checkbox', { name: 'write:deals' }).check();
    await page.getByRole('checkbox', { name: 'webhooks:manage' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const token = await page.getByRole('textbox', { name: 'Token' }).inputValue();
    expect(token).to.match(/^wsk_test_/);
    // The token works, on test data only.
    const health = (await (await app.request('/v1/health', { token })).json()) as { livemode: boolean };
    expect(health.livemode).to.equal(false);
    await page.getByRole('link', { name: 'Done: back to API keys' }).click();
    expect(new URL(page.url()).hash).to.equal('#/test/keys');
    await keyRows().filter({ hasText: 'Sandbox' }).waitFor();
    expect(await keyRows().filter({ hasText: 'Live one' }).count()).to.equal(0);
    await page.screenshot({ path: path.join(shots, '40-test-mode-keys.png'), fullPage: true });
    // Back to live: the live key, not the test one.
    await page.getByRole('switch', { name: 'Test mode' }).click();
    expect(new URL(page.url()).hash).to.equal('#/keys');
    await keyRows().filter({ hasText: 'Live one' }).waitFor();
    expect(await keyRows().filter({ hasText: 'Sandbox' }).count()).to.equal(0);
    expect(await page.getByRole('status').filter({ hasText: 'Test mode' }).count()).to.equal(0);

    // The test key's own page, its usage and its request log, in test mode.
    await page.goto(`/admin/#/test/keys`);
    await keyRows().filter({ hasText: 'Sandbox' }).getByRole('link', { name: 'Sandbox' }).click();
    await page.getByRole('heading', { name: 'Key “Sandbox”' }).waitFor();
    expect(new URL(page.url()).hash).to.match(/^#\/test\/keys\/key_/);
    await page.getByRole('link', { name: 'Request log and errors' }).click();
    expect(new URL(page.url()).hash).to.match(/^#\/test\/keys\/key_\w+\/requests$/);
    // Each server writes its request log within a second: the health check made with the token shows after a refresh.
    const logged = page.getByRole('table', { name: 'Request log' }).getByRole('row').filter({ hasText: '/v1/health' });
    await waitFor(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return (await logged.count()) > 0;
    }, 10_000, 'the test key\'s request in its log');
  });

  it('shows test webhooks and their deliveries in test mode only', async () => {
    const key = await createKey(app.deps.db, ['read:deals', 'write:deals', 'webhooks:manage'], { workspace: workspaceId, name: 'Hooks', scopes: ['read:deals', 'write:deals', 'webhooks:manage'], mode: 'test' });
    const made = await app.request('/v1/webhooks', { token: key.token, method: 'POST', json: { url: `${receiver.url}/modes`, events: ['deal.*'], description: 'Test hook' } });
    expect(made.status).to.equal(201);
    const sub = (await made.json()) as { id: string; secret: string };
    receiver.secrets.set('/modes', [sub.secret]);
    await app.request('/v1/deals', { token: key.token, method: 'POST', json: { title: 'Test deal' } });
    await receiver.waitFor(1, (r) => r.path === '/modes');
    const liveKey = await createKey(app.deps.db, ['webhooks:manage'], { workspace: workspaceId, name: 'Live hooks', scopes: ['webhooks:manage'] });
    expect((await app.request('/v1/webhooks', { token: liveKey.token, method: 'POST', json: { url: `${receiver.url}/live-modes`, events: ['deal.*'] } })).status).to.equal(201);
    await page.goto('/admin/#/webhooks');
    // The live list, once loaded, has the live subscription and not the test one.
    await page.getByRole('link', { name: `${receiver.url}/live-modes` }).waitFor();
    expect(await page.getByRole('link', { name: `${receiver.url}/modes` }).count()).to.equal(0);
    await page.getByRole('switch', { name: 'Test mode' }).click();
    expect(new URL(page.url()).hash).to.equal('#/test/webhooks');
    await page.getByRole('link', { name: `${receiver.url}/modes` }).waitFor();
    expect(await page.getByRole('link', { name: `${receiver.url}/live-modes` }).count()).to.equal(0);
    await page.getByRole('link', { name: `${receiver.url}/modes` }).click();
    expect(new URL(page.url()).hash).to.equal(`#/test/webhooks/${sub.id}`);
    await page.getByText('deal.created').first().waitFor();
    await waitFor(async () => (await page.getByText('succeeded').count()) > 0, 10_000, 'the delivery shown as succeeded');
    await page.screenshot({ path: path.join(shots, '41-test-mode-webhook.png'), fullPage: true });
    // The event log of each mode: the test deal's event under test, not under live.
    await page.getByRole('link', { name: 'Events' }).click();
    expect(new URL(page.url()).hash).to.equal('#/test/events');
    const log = page.getByRole('table', { name: 'Event log' });
    await log.getByRole('row').filter({ hasText: 'deal.created' }).first().waitFor();
    expect(await log.getByRole('row').filter({ hasText: 'deal.created' }).count()).to.equal(1);
    await page.getByRole('switch', { name: 'Test mode' }).click();
    expect(new URL(page.url()).hash).to.equal('#/events');
    await page.getByText('No events yet.').waitFor();
  });

  it('deletes all test data from test mode, showing the job until it is done, and leaves live data', async () => {
    const key = await createKey(app.deps.db, ['read:deals', 'write:deals'], { workspace: workspaceId, name: 'Doomed data', scopes: ['read:deals', 'write:deals'], mode: 'test' });
    const liveKey = await createKey(app.deps.db, ['read:deals', 'write:deals'], { workspace: workspaceId, name: 'Kept data', scopes: ['read:deals', 'write:deals'] });
    for (const title of ['One', 'Two', 'Three']) expect((await app.request('/v1/deals', { token: key.token, method: 'POST', json: { title } })).status).to.equal(201);
    const kept = (await (await app.request('/v1/deals', { token: liveKey.token, method: 'POST', json: { title: 'Live' } })).json()) as { id: string };
    // Live mode offers no such button.
    await page.goto('/admin/#/keys');
    await keyRows().filter({ hasText: 'Kept data' }).waitFor();
    expect(await page.getByRole('button', { name: 'Delete all test data' }).count()).to.equal(0);
    await page.goto('/admin/#/test/keys');
    await page.getByRole('button', { name: 'Delete all test data' }).click();
    await page.getByRole('dialog', { name: 'Delete all test data?' }).getByRole('button', { name: 'Delete test data' }).click();
    await page.getByRole('status').filter({ hasText: /^Done: \d+ objects and \d+ events deleted\.$/ }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: /^Done:/ }).textContent()).to.match(/^Done: (?:[3-9]|\d\d+) objects and \d+ events deleted\.$/);
    await page.screenshot({ path: path.join(shots, '42-test-data-deleted.png'), fullPage: true });
    expect(((await (await app.request('/v1/deals', { token: key.token })).json()) as { data: unknown[] }).data).to.deep.equal([]);
    expect((await app.request(`/v1/deals/${kept.id}`, { token: liveKey.token })).status).to.equal(200);
  });
});
