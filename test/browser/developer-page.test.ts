import { expect } from 'chai';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createUser } from '../../src/admin/users.js';
import { setKeyLifetime } from '../../src/admin/workspaces.js';
import { createKey, createWorkspace } from '../../src/auth/keys.js';
import { scopeCatalog } from '../../src/auth/scopes.js';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { newAddress } from '../helpers/admin.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { shootFailure, suiteBrowser } from '../helpers/browser.js';
import { startReceiver, verified, type Receiver } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

// TRUST_PROXY: each browser profile sends an X-Forwarded-For of its own, so throttled sign-ins stay in their test.
// Two retries (the page shows a failing delivery's three attempts), usage written every second.
const FAST = fastWebhooks({ TRUST_PROXY: 'true', WEBHOOK_RETRY_DELAYS: '0.2,0.2', USAGE_FLUSH_SECONDS: '1' });

describe('the Developer page, in Chromium', function () {
  this.timeout(60_000);
  let browser: Browser;
  let app: TestApp;
  let worker: Worker;
  let receiver: Receiver;
  const contexts: BrowserContext[] = [];
  let current: Page | undefined;
  let shots = '';

  before(async function () {
    ({ browser, shots } = await suiteBrowser(this));
    receiver = await startReceiver();
    app = await startApp({ env: FAST });
    worker = startWorker(app.deps);
  });
  after(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await worker?.stop();
    await app?.close();
    await receiver?.close();
  });

  /** A user of a new workspace (or of `workspaceId`), and their password. */
  async function user(options: { plan?: string; role?: 'admin' | 'viewer'; workspaceId?: string } = {}) {
    const workspaceId = options.workspaceId ?? (await createWorkspace(app.deps.db, { name: `Browser ${options.plan ?? 'pro'}`, plan: options.plan ?? 'pro' })).id;
    const created = await createUser(app.deps.db, { workspace: workspaceId, email: `browser.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 6)}@example.com`, role: options.role ?? 'admin' });
    return { workspaceId, email: created.email, password: created.password };
  }

  /** A fresh browser profile (no cookie) at `width`. */
  async function newPage(width = 1280): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, baseURL: app.url, extraHTTPHeaders: { 'x-forwarded-for': newAddress() } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.url });
    context.setDefaultTimeout(15_000);
    contexts.push(context);
    current = await context.newPage();
    return current;
  }

  afterEach(async function () {
    await shootFailure(this.currentTest, current, shots);
  });

  async function signIn(page: Page, email: string, password: string, hash = '') {
    await page.goto(`/admin/${hash}`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  /** Every screenshot is of a screen whose controls all have an accessible name. */
  async function shot(page: Page, name: string) {
    expect(await unlabelled(page), `controls without a name on ${name}`).to.deep.equal([]);
    await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  }

  /** Inputs, selects, buttons and links that a screen reader could not name (by label, aria-label or text). */
  function unlabelled(page: Page): Promise<string[]> {
    return page.evaluate(`[...document.querySelectorAll('input, select, textarea, button, a[href], summary')]
      .filter((el) => {
        const named = (el.getAttribute('aria-label') || '').trim() || (el.labels && [...el.labels].map((l) => l.textContent).join('').trim()) || (el.matches('button, a, summary') && el.textContent.trim());
        return !named;
      })
      .map((el) => el.outerHTML.slice(0, 80))`) as Promise<string[]>;
  }

  it('loads under the JavaScript budget and says how fast it became usable', async () => {
    const page = await newPage();
    let scriptBytes = 0;
    page.on('response', async (response) => {
      if (response.request().resourceType() === 'script') scriptBytes += Number((await response.allHeaders())['content-length'] ?? (await response.body()).length);
    });
    const started = Date.now();
    await page.goto('/admin/');
    await page.getByLabel('Email').waitFor();
    const interactiveMs = Date.now() - started;
    const timing = await page.evaluate('JSON.stringify(performance.getEntriesByType("navigation")[0])');
    const domInteractive = Math.round((JSON.parse(String(timing)) as { domInteractive: number }).domInteractive);
    console.log(`      first load: ${(scriptBytes / 1024).toFixed(1)} KiB of JavaScript (compressed), sign-in form usable after ${interactiveMs} ms (DOM interactive at ${domInteractive} ms)`);
    expect(scriptBytes).to.be.greaterThan(0).and.lessThan(300 * 1024);
    await shot(page, '01-sign-in');
  });

  it('works from the keyboard alone: sign in, open a section, create a key', async () => {
    const person = await user({ plan: 'pro' });
    const page = await newPage();
    await page.goto('/admin/#/keys');
    await page.getByLabel('Email').waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.type(person.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(person.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('link', { name: 'Create key' }).focus();
    await page.keyboard.press('Enter');
    // As a person would: the scopes are on screen before Tab goes to the first of them.
    await page.getByRole('checkbox', { name: 'read:clients' }).waitFor();
    await page.getByLabel('Name').focus();
    await page.keyboard.type('Keyboard key');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    expect(await page.getByRole('checkbox', { name: 'read:clients' }).isChecked()).to.equal(true);
    await page.getByLabel(/Rate limit/).focus();
    await page.keyboard.press('Enter');
    expect(await page.getByRole('textbox', { name: 'Token' }).inputValue()).to.match(/^wsk_/);
  });

  it('signs in, saying plainly when the password is wrong', async () => {
    const person = await user();
    const page = await newPage();
    await signIn(page, person.email, 'not the password');
    await page.getByRole('alert').filter({ hasText: 'do not match an account' }).waitFor();
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.getByText(person.email).count()).to.equal(1);
  });

  it('creates a key whose token works until it is revoked in the page', async () => {
    const person = await user({ plan: 'pro' });
    const page = await newPage();
    await signIn(page, person.email, person.password);
    await page.getByRole('link', { name: 'Create key' }).click();
    await page.getByLabel('Name').fill('Browser key');
    await page.getByRole('checkbox', { name: 'read:deals' }).check();
    await page.getByRole('checkbox', { name: 'write:deals' }).check();
    expect(await page.getByLabel(/Rate limit/).inputValue()).to.equal('60');
    await shot(page, '03-create-key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const tokenField = page.getByRole('textbox', { name: 'Token' });
    const token = await tokenField.inputValue();
    expect(token).to.match(/^wsk_/);
    await page.getByText('will not be shown again').waitFor();
    await page.getByRole('button', { name: 'Copy token' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).to.equal(token);
    await shot(page, '04-token-shown-once');

    expect((await app.request('/v1/health', { token })).status).to.equal(200);

    await page.getByRole('link', { name: 'Done: back to API keys' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Browser key' });
    await row.getByText('Live').waitFor();
    await shot(page, '02-keys');
    await row.getByRole('button', { name: 'Revoke Browser key' }).click();
    const dialog = page.getByRole('dialog', { name: /Revoke/ });
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('status').filter({ hasText: 'is revoked' }).waitFor();
    await row.getByText(/Revoked/).waitFor();
    expect((await app.request('/v1/health', { token })).status).to.equal(401);
  });

  it('marks keys that expire within 7 days, and asks for an expiry within the workspace key lifetime (and takes an allowlist)', async () => {
    const person = await user({ plan: 'pro' });
    const DAY = 24 * 3600 * 1000;
    const make = async (name: string, days?: number) => {
      const key = await createKey(app.deps.db, scopeCatalog(app.registry).map((s) => s.name), { workspace: person.workspaceId, name, scopes: ['read:deals'], ...(days ? { expires_in_days: days } : {}) });
      return key.id;
    };
    await make('Lives on');
    await make('Expires soon', 3);
    await make('Expires later', 60);
    const gone = await make('Already expired', 1);
    await app.deps.db('api_keys').where({ id: gone }).update({ expires_at: Date.now() - DAY });
    const page = await newPage();
    await signIn(page, person.email, person.password, '#/keys');
    const row = (name: string) => page.getByRole('row').filter({ hasText: name });
    // Marked: its status in bold says how soon; the others are plain.
    await row('Expires soon').locator('strong', { hasText: /^Expires in 3 days$/ }).waitFor();
    expect(await row('Expires later').locator('strong').count()).to.equal(0);
    expect(await row('Expires later').getByText('Live').count()).to.equal(1);
    expect(await row('Lives on').getByRole('cell', { name: 'Never' }).count()).to.equal(1);
    await row('Already expired').getByText(/^Expired /).waitFor();
    await shot(page, '12-keys-expiring');

    await setKeyLifetime(app.deps.db, person.workspaceId, 30);
    await page.reload();
    await page.getByText('Every new key must expire within 30 days.').waitFor();
    await page.getByRole('link', { name: 'Create key' }).click();
    const expiry = page.getByLabel('Expires in (days, 1-30)');
    expect(await expiry.getAttribute('required')).to.not.equal(null);
    expect(await expiry.getAttribute('max')).to.equal('30');
    await page.getByLabel('Name').fill('Monthly');
    await page.getByRole('checkbox', { name: 'read:deals' }).check();
    await expiry.fill('30');
    await page.getByLabel(/Allowed IP addresses/).fill('203.0.113.7, 2001:db8::/32');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('will not be shown again').waitFor();
    await page.getByText(/It expires /).waitFor();
    const stored = (await app.deps.db('api_keys').where({ workspace_id: person.workspaceId, name: 'Monthly' }).first('expires_at', 'allowed_ips')) as { expires_at: number | string; allowed_ips: string };
    expect(Number(stored.expires_at) - Date.now()).to.be.closeTo(30 * DAY, 60_000);
    expect(JSON.parse(stored.allowed_ips)).to.deep.equal(['203.0.113.7', '2001:db8::/32']);
  });

  it('rolls a key: the new token shown once, the old one working through the chosen overlap', async () => {
    const person = await user({ plan: 'pro' });
    const old = await createKey(app.deps.db, scopeCatalog(app.registry).map((s) => s.name), { workspace: person.workspaceId, name: 'Nightly export', scopes: ['read:deals'], rate_limit: 300 });
    const page = await newPage();
    await signIn(page, person.email, person.password, `#/keys/${old.id}`);
    await page.getByRole('heading', { name: 'Key “Nightly export”' }).waitFor();
    await page.getByRole('button', { name: 'Roll key' }).click();
    const dialog = page.getByRole('dialog', { name: /Roll/ });
    expect(await dialog.getByLabel('The old token keeps working for').inputValue()).to.equal('3600');
    await dialog.getByLabel('The old token keeps working for').selectOption({ label: '24 hours' });
    await shot(page, '13-roll-key');
    await dialog.getByRole('button', { name: 'Roll key' }).click();
    await page.getByRole('heading', { name: 'Key “Nightly export” rolled' }).waitFor();
    const token = await page.getByRole('textbox', { name: 'New token' }).inputValue();
    expect(token).to.match(/^wsk_/).and.not.equal(old.token);
    await page.getByText('The old token works until').waitFor();
    expect((await app.request('/v1/health', { token })).status).to.equal(200);
    expect((await app.request('/v1/health', { token: old.token })).status).to.equal(200, 'within the overlap');
    const ends = (await app.deps.db('api_keys').where({ id: old.id }).first('revoked_at')) as { revoked_at: number | string };
    expect(Number(ends.revoked_at) - Date.now()).to.be.closeTo(24 * 3600 * 1000, 60_000);
    await page.getByRole('link', { name: 'API keys' }).first().click();
    await page.getByRole('row').filter({ hasText: old.prefix }).getByText(/^Rolled: works until /).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'Nightly export' }).count()).to.equal(2);
  });

  it("shows a key's requests per hour, the rate-limited ones apart", async () => {
    const { workspaceId, keyId, token } = await app.workspaceWithKey({ rateLimit: 2 });
    for (let i = 0; i < 5; i += 1) await app.request('/v1/health', { token });
    const person = await user({ workspaceId });
    const page = await newPage();
    await signIn(page, person.email, person.password, `#/keys/${keyId}`);
    await page.getByRole('heading', { name: 'Requests' }).waitFor();
    // The meter writes every few seconds: reload until the counts are there.
    await waitFor(async () => {
      await page.reload();
      await page.getByRole('heading', { name: 'Requests' }).waitFor();
      return (await page.getByText('5 requests in the last 7 days, 3 of them rate limited').count()) > 0;
    }, 20_000, 'the usage counts on the page');
    expect(await page.getByRole('img', { name: /5 requests in the last 7 days, 3 of them rate limited/ }).count()).to.equal(1);
    await shot(page, '05-key-usage');
  });

  it("shows a key's request log, filtered by class of status, and its errors by status and code over 24 hours and 7 days", async () => {
    const { workspaceId, keyId, token } = await app.workspaceWithKey({ scopes: ['read:deals'] });
    expect((await app.request('/v1/deals', { token, headers: { 'x-request-id': 'first-call' } })).status).to.equal(200);
    expect((await app.request('/v1/deals/deal_gone', { token })).status).to.equal(404);
    expect((await app.request('/v1/deals/deal_lost', { token })).status).to.equal(404);
    expect((await app.request('/v1/deals?limit=0', { token })).status).to.equal(400);
    // The log is written about a second after the answers.
    await waitFor(async () => (await app.deps.db('key_requests').where({ key_id: keyId })).length === 4, 10_000, 'the requests logged');
    const person = await user({ workspaceId });
    const page = await newPage();
    await signIn(page, person.email, person.password, `#/keys/${keyId}`);
    await page.getByRole('link', { name: 'Request log and errors' }).click();
    await page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
    await page.getByText('3 errors in the last 24 hours, 3 in the last 7 days').waitFor();
    const errors = page.getByRole('region', { name: 'Errors by status and code' });
    expect(await errors.getByRole('row').allInnerTexts()).to.deep.equal(['Status\tError code\tLast 24 hours\tLast 7 days', '404\tnot_found\t2\t2', '400\tinvalid_parameter\t1\t1']);
    const log = page.getByRole('region', { name: 'Request log' });
    await log.getByRole('row').nth(4).waitFor();
    expect(await log.getByRole('row').count()).to.equal(5);
    const newest = await log.getByRole('row').nth(1).innerText();
    expect(newest).to.contain('GET').and.contain('/v1/deals').and.contain('400').and.contain('invalid_parameter');
    await log.getByRole('row').filter({ hasText: 'first-call' }).getByText('200').waitFor();
    await shot(page, '14-key-requests');
    await page.getByLabel('Show').selectOption({ label: 'Client errors (4xx)' });
    await waitFor(async () => (await log.getByRole('row').count()) === 4, 10_000, 'the 4xx filter');
    expect((await log.getByRole('row').allInnerTexts()).slice(1).every((row) => /\t4\d\d\t/.test(row))).to.equal(true);
    await page.getByLabel('Show').selectOption({ label: 'Server errors (5xx)' });
    await page.getByText('No requests answered 5xx yet.').waitFor();
  });

  it("shows a banner on the page of a subscription that is failing, and of one the service turned off", async () => {
    const { workspaceId, token } = await app.workspaceWithKey();
    const subscribe = async (path: string) => {
      const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}${path}`, events: ['deal.created'] } });
      return (await res.json()) as { id: string; secret: string };
    };
    const failing = await subscribe('/banner-down');
    const gone = await subscribe('/banner-gone');
    receiver.secrets.set('/banner-down', [failing.secret]);
    receiver.secrets.set('/banner-gone', [gone.secret]);
    const before = receiver.respond;
    receiver.respond = (r, n) => (r.path === '/banner-down' ? { status: 500 } : r.path === '/banner-gone' ? { status: 410 } : before(r, n));
    // The receivers stay down to the end: a success would end the failing streak, and its banner.
    try {
      for (let i = 0; i < 20; i += 1) await app.request('/v1/deals', { token, method: 'POST', json: { title: `Banner ${i}` } });
      const shown = async (id: string) => (await (await app.request(`/v1/webhooks/${id}`, { token })).json()) as { failing_reported_at: string | null; disabled_reason: string | null };
      await waitFor(async () => (await shown(failing.id)).failing_reported_at !== null, 20_000, 'webhook.failing reported');
      await waitFor(async () => (await shown(gone.id)).disabled_reason === 'gone', 20_000, 'the 410 subscription turned off');
      const person = await user({ workspaceId });
      const page = await newPage();
      await signIn(page, person.email, person.password, `#/webhooks/${failing.id}`);
      await page.getByRole('status').filter({ hasText: 'Failing: at least half of its last 20 deliveries failed' }).waitFor();
      await shot(page, '15-webhook-failing');
      await page.goto(`/admin/#/webhooks/${gone.id}`);
      await page.getByRole('status').filter({ hasText: 'Turned off by the service: the receiver answered 410 Gone' }).waitFor();
    } finally {
      receiver.respond = before;
    }
  });

  it('says when sign-in is throttled, and for how long', async () => {
    const person = await user();
    const page = await newPage();
    await page.goto('/admin/');
    for (let i = 0; i < 10; i += 1) {
      await page.getByLabel('Email').fill(person.email);
      await page.getByLabel('Password').fill(`wrong ${i}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'do not match an account' }).waitFor();
      await page.getByRole('button', { name: 'Sign in' }).and(page.locator(':enabled')).waitFor();
    }
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: /Too many failed sign-ins .*try again in \d+ minute/ }).waitFor();
    expect(await page.getByRole('heading', { name: 'API keys' }).count()).to.equal(0);
  });

  it('offers no write scope on a read_only plan, and says why', async () => {
    const person = await user({ plan: 'starter' });
    const page = await newPage();
    await signIn(page, person.email, person.password, '#/keys/new');
    await page.getByRole('heading', { name: 'Create key' }).waitFor();
    expect(await page.getByRole('checkbox', { name: 'write:deals' }).isDisabled()).to.equal(true);
    expect(await page.getByRole('checkbox', { name: 'read:deals' }).isEnabled()).to.equal(true);
    await page.getByText(/allows read access only/).waitFor();
  });

  it('creates a webhook, shows its deliveries and attempts, retries a failed one, and rotates its secret', async () => {
    const person = await user({ plan: 'pro' });
    const page = await newPage();
    await signIn(page, person.email, person.password, '#/webhooks');
    await page.getByRole('link', { name: 'Create webhook' }).click();
    await page.getByLabel('URL').fill(`${receiver.url}/browser`);
    await page.getByRole('checkbox', { name: 'Every deal event (deal.*)' }).check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await page.getByRole('textbox', { name: 'Secret' }).inputValue();
    expect(secret).to.match(/^whsec_/);
    receiver.secrets.set('/browser', [secret]);
    await page.getByRole('link', { name: 'Go to the webhook' }).click();

    // A test event, delivered.
    receiver.respond = () => ({ status: 200, body: 'fine' });
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('status').filter({ hasText: 'A test event is queued' }).waitFor();
    const deliveries = page.getByRole('region', { name: 'Deliveries' });
    await deliveries.getByText('succeeded').waitFor();
    await shot(page, '07-webhook');

    // The receiver fails: every attempt shows its status.
    receiver.respond = () => ({ status: 500, body: 'receiver is down' });
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByLabel('Status').selectOption('failed');
    await deliveries.getByText('failed').first().waitFor({ timeout: 20_000 });
    await deliveries.getByRole('link', { name: /Delivery dlv_\w+ details/ }).first().click();
    await page.getByRole('heading', { name: /Delivery dlv_/ }).waitFor();
    const attempts = page.getByRole('region', { name: 'Attempts' });
    // Three attempts 0.2 s apart, each shown as the page refreshes: on a machine running the three
    // backends' suites side by side, this has taken more than the 15 s default.
    await attempts.getByRole('row').filter({ hasText: 'receiver is down' }).nth(2).waitFor({ timeout: 45_000 });
    expect(await attempts.getByRole('row').filter({ hasText: 'answered 500' }).count()).to.equal(3);
    await shot(page, '08-delivery-failed');

    // Fixed: Retry succeeds.
    receiver.respond = () => ({ status: 200, body: 'back' });
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByText('succeeded').first().waitFor({ timeout: 20_000 });
    await attempts.getByRole('row').filter({ hasText: 'back' }).waitFor();
    expect(await attempts.getByRole('row').count()).to.equal(5);

    // Rotate: the next delivery carries both signatures, and each verifies.
    await page.getByRole('link', { name: '← The webhook' }).click();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = await page.getByRole('textbox', { name: 'Secret' }).inputValue();
    expect(rotated).to.match(/^whsec_/).and.not.equal(secret);
    receiver.secrets.set('/browser', [secret, rotated]);
    const before = receiver.received.length;
    await page.getByRole('button', { name: 'Send test event' }).click();
    const [delivered] = (await receiver.waitFor(before + 1)).slice(before);
    expect(String(delivered?.headers['webhook-signature']).split(' ')).to.have.length(2);
    // standardwebhooks accepts a delivery when any of its signatures matches: each secret alone must.
    expect(verified(secret, delivered!).type).to.equal('webhook.test');
    expect(verified(rotated, delivered!).type).to.equal('webhook.test');
    expect(receiver.rejected).to.deep.equal([]);

    // Recover: the failed delivery of the window is sent again, and succeeds.
    receiver.respond = () => ({ status: 500, body: 'down again' });
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByLabel('Status').selectOption('failed');
    await deliveries.getByText('failed').first().waitFor({ timeout: 20_000 });
    receiver.respond = () => ({ status: 200, body: 'recovered' });
    const beforeRecovery = receiver.received.length;
    await page.getByRole('button', { name: 'Recover missed events' }).click();
    await page.getByRole('status').filter({ hasText: /^1 delivery queued/ }).waitFor();
    await receiver.waitFor(beforeRecovery + 1);
    // The failed list empties as the list refreshes itself.
    await page.getByText('No deliveries with status failed.').waitFor({ timeout: 20_000 });
    await page.getByLabel('Status').selectOption('');

    // Edit, then disable.
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Description (optional)').fill('Orders to the ERP');
    await page.getByLabel(/Max deliveries per second/).fill('20');
    await page.getByRole('checkbox', { name: 'invoice.paid' }).check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByText('deal.*, invoice.paid').waitFor();
    await page.getByText('Orders to the ERP').waitFor();
    await page.getByText('At most 20 deliveries a second').waitFor();
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('status').filter({ hasText: 'Disabled' }).waitFor();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    // What the page did is what the public API now reads.
    const token = await app.addKey(person.workspaceId, ['webhooks:manage']);
    const stored = (await (await app.request(`/v1/webhooks/${page.url().split('/').pop()}`, { token })).json()) as Record<string, unknown>;
    expect(stored).to.include({ description: 'Orders to the ERP', enabled: false, max_deliveries_per_second: 20 });
    expect(stored.events).to.deep.equal(['deal.*', 'invoice.paid']);
  });

  it('as a new user saw it: the token whole and focused, Cancel first in a dialog, times in UTC that never wrap, a hint that a narrow table scrolls, sign-ins hidden at will', async () => {
    const person = await user({ plan: 'pro' });
    const page = await newPage(390);
    await signIn(page, person.email, person.password);
    await page.getByRole('link', { name: 'Create key' }).click();
    await page.getByLabel('Name').fill('Phone key');
    await page.getByRole('checkbox', { name: 'read:deals' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const tokenField = page.getByRole('textbox', { name: 'Token' });
    const token = await tokenField.inputValue();
    expect(token).to.match(/^wsk_/);
    // Focus is on the token, and all of it is in view at 390 px: nothing scrolled out of its box.
    expect(await tokenField.evaluate((el) => el.matches(':focus'))).to.equal(true);
    expect(await tokenField.evaluate((el) => el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight)).to.equal(true);
    await shot(page, '12-token-at-390px');

    await page.getByRole('link', { name: 'Done: back to API keys' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Phone key' });
    await row.getByText('Live').waitFor();
    // A table wider than a phone says that it scrolls.
    await page.getByText('Scroll sideways for more columns').first().waitFor();
    expect(await page.getByRole('region', { name: /scrolls sideways/ }).count()).to.be.greaterThan(0);
    // Times are UTC, written whole on one line: the parts are joined by no-break spaces.
    const created = row.locator('time').first();
    expect(await created.textContent()).to.match(/^\d{4}-\d{2}-\d{2}\u00a0\d{2}:\d{2}\u00a0UTC$/);
    expect(await created.evaluate((el) => el.getClientRects().length), 'lines the time takes').to.equal(1);
    await shot(page, '13-keys-at-390px');

    // A destructive dialog opens on Cancel: Enter keeps the key.
    await row.getByRole('button', { name: 'Revoke Phone key' }).click();
    const dialog = page.getByRole('dialog', { name: /Revoke/ });
    await dialog.waitFor();
    expect(await dialog.getByRole('button', { name: 'Cancel' }).evaluate((el) => el.matches(':focus'))).to.equal(true);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    await row.getByText('Live').waitFor();
    expect((await app.request('/v1/health', { token })).status).to.equal(200);

    // The audit log can leave the sign-ins out.
    await page.goto('/admin/#/audit');
    await page.getByRole('cell', { name: 'user.signed_in' }).first().waitFor();
    await page.getByRole('checkbox', { name: 'Hide sign-ins' }).check();
    await page.getByRole('cell', { name: 'user.signed_in' }).first().waitFor({ state: 'detached' });
    expect(await page.getByRole('cell', { name: 'key.created' }).count()).to.equal(1);
  });

  it("lists webhooks with each one's last deliveries, asked for in one request, not one per row", async () => {
    const person = await user({ plan: 'pro' });
    const token = await app.addKey(person.workspaceId, ['webhooks:manage']);
    for (const name of ['one', 'two', 'three']) {
      const hook = (await (await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/list-${name}`, events: ['deal.created'] } })).json()) as { id: string };
      expect((await app.request(`/v1/webhooks/${hook.id}/test`, { token, method: 'POST' })).status).to.equal(202);
    }
    const page = await newPage();
    const asked: string[] = [];
    page.on('request', (r) => {
      if (/deliveries/.test(r.url())) asked.push(new URL(r.url()).pathname);
    });
    await signIn(page, person.email, person.password, '#/webhooks');
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    for (const name of ['one', 'two', 'three']) await page.getByRole('row').filter({ hasText: `/list-${name}` }).getByText('webhook.test:').waitFor();
    expect(asked).to.deep.equal(['/internal/v1/webhook-deliveries/recent']);
  });

  it('reads and writes "Recover since" in UTC, as every other time on the page', async () => {
    const person = await user({ plan: 'pro' });
    const token = await app.addKey(person.workspaceId, ['webhooks:manage']);
    const hook = (await (await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/utc`, events: ['deal.created'] } })).json()) as { id: string };
    const page = await newPage();
    // A browser far from UTC: the field must not follow its zone.
    await page.context().close();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: app.url, timezoneId: 'Pacific/Auckland', extraHTTPHeaders: { 'x-forwarded-for': newAddress() } });
    contexts.push(context);
    const far = await context.newPage();
    current = far;
    await signIn(far, person.email, person.password, `#/webhooks/${hook.id}`);
    const since = far.getByLabel('Recover since (UTC)');
    const value = await since.inputValue();
    const shown = Date.parse(`${value}:00Z`);
    expect(Math.abs(shown - (Date.now() - 24 * 3_600_000))).to.be.below(5 * 60_000);
    expect(await far.getByText(/UTC$/).count()).to.be.greaterThan(0);
  });

  it('lists the events with an example payload, and the audit log filtered by action', async () => {
    const person = await user({ plan: 'pro' });
    const page = await newPage();
    await signIn(page, person.email, person.password, '#/events');
    await page.getByRole('heading', { name: 'deal.stage_changed' }).waitFor();
    await page.getByText('Example payload of deal.stage_changed').click();
    await page.getByText('"type": "deal.stage_changed"').waitFor();
    await shot(page, '09-events');

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await page.getByRole('cell', { name: 'user.signed_in' }).first().waitFor();
    await page.getByLabel('Action').selectOption('key.created');
    await page.getByText('Nothing recorded for key.created').waitFor();
    await shot(page, '10-audit-log');
  });

  it('as a new user met its rough edges, mended: each field error once in the form\'s words, an IP field as large as the others, codes and ids whole, a route column, audit details in words and UTC, no peak over nothing, a key\'s maker in a sentence', async () => {
    const person = await user({ plan: 'pro' });
    const page = await newPage(900);
    await signIn(page, person.email, person.password, '#/keys/new');
    await page.getByRole('heading', { name: 'Create key' }).waitFor();
    // The allowlist field is as wide as the name's and several lines high.
    const ips = page.getByLabel(/Allowed IP addresses/);
    const [nameBox, ipsBox] = [await page.getByLabel('Name').boundingBox(), await ips.boundingBox()];
    expect(ipsBox!.width).to.be.closeTo(nameBox!.width, 2);
    expect(ipsBox!.height).to.be.greaterThan(nameBox!.height * 1.8);
    await page.getByLabel('Name').fill('Edges');
    await page.getByRole('checkbox', { name: 'read:deals' }).check();
    await ips.fill('203.0.113.7, 10.1.2.3/8');
    await page.getByRole('button', { name: 'Create key' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('Nothing was saved: correct this and try again.').waitFor();
    const items = await alert.getByRole('listitem').allInnerTexts();
    expect(items).to.have.length(1);
    expect(items[0]).to.match(/^Allowed IP addresses, entry 2: /);
    // Said once, and never as a raw pointer.
    expect(await alert.innerText()).not.to.contain('allowed_ips');
    expect((await alert.innerText()).split(items[0]!.replace(/^Allowed IP addresses, entry 2: /, '')).length - 1).to.equal(1);
    await shot(page, '16-create-key-refused');

    // A key made by the admin command, used a few times, then rolled: its page, its log, the audit log.
    const made = await createKey(app.deps.db, scopeCatalog(app.registry).map((s) => s.name), { workspace: person.workspaceId, name: 'Operator made', scopes: ['read:deals'], rate_limit: 600 });
    await page.goto(`/admin/#/keys/${made.id}`);
    await page.getByRole('heading', { name: 'Key “Operator made”' }).waitFor();
    await page.getByText(/ by the admin command$/).waitFor();
    // No request yet: the chart says so, with no peak of 1 over nothing.
    await page.getByText('Requests per hour, last 7 days (none yet).').waitFor();
    expect(await page.getByText(/peak/).count()).to.equal(0);
    expect((await app.request('/v1/deals/deal_nothere', { token: made.token, headers: { 'x-request-id': 'a-request-id-long-enough-to-wrap-0123456789' } })).status).to.equal(404);
    await waitFor(async () => (await app.deps.db('key_requests').where({ key_id: made.id })).length === 1, 10_000, 'the request logged');
    await page.goto(`/admin/#/keys/${made.id}/requests`);
    const log = page.getByRole('region', { name: /^Request log/ });
    await log.getByRole('row').nth(1).waitFor();
    expect(await log.getByRole('columnheader').allInnerTexts()).to.deep.equal(['Time', 'Method', 'Route', 'Path', 'Status', 'Error code', 'Duration', 'Request id', 'Address']);
    const row = log.getByRole('row').nth(1);
    await row.getByRole('cell', { name: '/v1/deals/{id}' }).waitFor();
    // Whole on one line each: a code or an id broken mid-word reads as two.
    const lineHeight = async (text: string) => (await row.locator('code', { hasText: text }).boundingBox())!.height;
    for (const text of ['not_found', 'a-request-id-long-enough-to-wrap-0123456789', '/v1/deals/deal_nothere']) expect(await lineHeight(text), text).to.be.lessThan(30);
    // The failed status is marked, and nothing else in its row is.
    const colour = (cell: number) => row.getByRole('cell').nth(cell).evaluate((td) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(td).color);
    expect(await colour(4)).to.equal('rgb(180, 35, 24)');
    for (const cell of [2, 3, 5]) expect(await colour(cell), `cell ${cell}`).not.to.equal('rgb(180, 35, 24)');
    await shot(page, '17-key-requests-whole');
    await page.goto('/admin/#/keys');
    const prefix = page.getByRole('row').filter({ hasText: 'Operator made' }).getByRole('cell').nth(1).locator('code.whole');
    expect((await prefix.boundingBox())!.height).to.be.lessThan(30);

    await page.goto(`/admin/#/keys/${made.id}`);
    await page.getByRole('button', { name: 'Roll key' }).click();
    await page.getByRole('dialog', { name: /Roll/ }).getByRole('button', { name: /^Roll/ }).click();
    await page.getByText('will not be shown again').waitFor();
    await page.goto('/admin/#/audit');
    const rolled = page.getByRole('row').filter({ hasText: 'key.rolled' });
    await rolled.waitFor();
    const details = await rolled.getByRole('cell').last().innerText();
    expect(details).to.contain('old key refused from:').and.match(/\d{4}-\d{2}-\d{2}\s\d{2}:\d{2}:\d{2}\sUTC/);
    expect(details).not.to.match(/[{}"]|\d{2}T\d{2}/);
    // Read as lines, not a column one word wide: the row is a few lines high.
    expect((await rolled.boundingBox())!.height).to.be.lessThan(200);
    await shot(page, '18-audit-details');
  });

  it('offers a viewer no control that changes anything', async () => {
    const owner = await user({ plan: 'pro' });
    const viewer = await user({ workspaceId: owner.workspaceId, role: 'viewer' });
    await app.addKey(owner.workspaceId, ['read:deals']);
    const page = await newPage();
    await signIn(page, viewer.email, viewer.password, '#/keys');
    await page.getByRole('row').filter({ hasText: 'another key' }).waitFor();
    await page.getByText('You have viewer access').waitFor();
    expect(await page.getByRole('link', { name: 'Create key' }).count()).to.equal(0);
    expect(await page.getByRole('button', { name: /Revoke/ }).count()).to.equal(0);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    expect(await page.getByRole('link', { name: 'Create webhook' }).count()).to.equal(0);
    await shot(page, '11-viewer');
    const token = await app.addKey(owner.workspaceId, ['webhooks:manage']);
    const hook = (await (await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/viewer`, events: ['*'] } })).json()) as { id: string };
    await page.goto(`/admin/#/webhooks/${hook.id}`);
    await page.getByRole('heading', { name: /viewer$/ }).waitFor();
    await page.getByText('You have viewer access').waitFor();
    for (const name of ['Edit', 'Disable', 'Rotate secret', 'Send test event', 'Recover missed events', 'Delete']) expect(await page.getByRole('button', { name }).count(), name).to.equal(0);
  });

  it('returns to sign-in when the session ends, then to where the person was', async () => {
    const person = await user({ plan: 'pro' });
    const page = await newPage();
    await signIn(page, person.email, person.password, '#/audit');
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    // The page's own read must be answered first: ended sooner, the page would show sign-in before the click.
    await page.getByRole('cell', { name: 'user.signed_in' }).first().waitFor();
    await app.deps.db('sessions').where({ user_id: (await app.deps.db('users').where({ email: person.email }).first()).id }).delete();
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByText('Your session has ended').waitFor();
    await page.getByLabel('Email').fill(person.email);
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Events' }).waitFor();
  });

  it('signs out, and the back button does not show the keys again', async () => {
    const person = await user({ plan: 'pro' });
    const page = await newPage(390);
    await signIn(page, person.email, person.password, '#/keys');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await shot(page, '06-keys-phone-width');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out').waitFor();
    await page.goBack();
    expect(page.url()).to.match(/#\/keys$/);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('heading', { name: 'API keys' }).count()).to.equal(0);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('heading', { name: 'API keys' }).count()).to.equal(0);
  });
});
