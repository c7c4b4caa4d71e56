import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createUser } from '../../src/admin/users.js';
import { createWorkspace } from '../../src/auth/keys.js';
import { waitFor } from '../helpers/app.js';
import { shootFailure, signedInPage, suiteBrowser } from '../helpers/browser.js';
import { GADGET_VERSIONS, startVersionedApp, type VersionedApp } from '../helpers/versioned-app.js';

/** A key's API version on the Developer page (docs/reference.md section 19), with the gadgets fixture's three versions. */
describe('the Developer page, in Chromium: API versions of keys', function () {
  this.timeout(60_000);
  let browser: Browser;
  let versioned: VersionedApp;
  let context: BrowserContext | undefined;
  let page: Page;
  let shots = '';

  before(async function () {
    this.timeout(120_000);
    ({ browser, shots } = await suiteBrowser(this));
    versioned = await startVersionedApp('browser_versions', { TRUST_PROXY: 'true' });
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await versioned?.close();
  });
  afterEach(async function () {
    await shootFailure(this.currentTest, page, shots);
  });

  /** A new workspace's admin, signed in at `hash` of the page, in a fresh browser profile. */
  async function signedIn(workspaceId: string, hash: string): Promise<void> {
    const { app } = versioned;
    const person = await createUser(app.deps.db, { workspace: workspaceId, email: `versions.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 6)}@example.com`, role: 'admin' });
    await context?.close();
    ({ context, page } = await signedInPage(browser, app.url, person, hash));
  }

  const newWorkspace = async () => (await createWorkspace(versioned.app.deps.db, { name: 'Versions', plan: 'pro' })).id;

  it("shows an older key's version and the changes since, and upgrades it to the latest", async () => {
    const { app } = versioned;
    const workspace = await newWorkspace();
    const key = await versioned.keyAt(workspace, GADGET_VERSIONS.first);
    await signedIn(workspace, `#/keys/${key.id}`);
    const section = page.getByRole('region', { name: 'API version' });
    await section.getByText(`the latest is ${GADGET_VERSIONS.latest}`).waitFor();
    // The changes since its version: both later versions, each with what it changed.
    await section.getByText('expected_close_date is now close_date; contact_email is now owner_email.').waitFor();
    await section.getByText(/size \(a text such as "12 cm"\) is now size_cm/).waitFor();
    await page.screenshot({ path: path.join(shots, '30-key-api-version.png'), fullPage: true });
    await section.getByRole('button', { name: `Upgrade to ${GADGET_VERSIONS.latest}` }).click();
    await page.getByRole('dialog', { name: /Upgrade/ }).getByRole('button', { name: `Upgrade to ${GADGET_VERSIONS.latest}` }).click();
    await page.getByText(`now answers in API version ${GADGET_VERSIONS.latest}`).waitFor();
    await section.getByText(', the latest version.').waitFor();
    expect(await section.getByRole('button', { name: /Upgrade/ }).count()).to.equal(0);
    // The pin moved on the server, audited: the key's next requests are answered in the latest.
    await waitFor(async () => (await app.request('/v1/versions', { token: key.token })).headers.get('api-version') === GADGET_VERSIONS.latest, 5000, 'the new pin');
    const audited = await app.deps.db('audit_log').where({ action: 'key.version_changed', target_id: key.id }).first('details');
    expect(JSON.parse(String((audited as { details: string }).details)).api_version).to.deep.equal({ from: GADGET_VERSIONS.first, to: GADGET_VERSIONS.latest });
  });

  it('makes a key pinned to the version chosen, and lists each key with its version', async () => {
    await signedIn(await newWorkspace(), '#/keys/new');
    await page.getByLabel('Name').fill('Pinned');
    await page.getByRole('checkbox', { name: /read:gadgets/ }).check();
    const choice = page.getByLabel('API version (what its requests are answered in)');
    expect(await choice.inputValue()).to.equal('');
    expect(await choice.locator('option').allTextContents()).to.deep.equal([`The latest (${GADGET_VERSIONS.latest})`, GADGET_VERSIONS.renamed, GADGET_VERSIONS.first]);
    await choice.selectOption(GADGET_VERSIONS.renamed);
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText(`API version ${GADGET_VERSIONS.renamed}.`).waitFor();
    const token = await page.getByRole('textbox', { name: 'Token' }).inputValue();
    expect((await versioned.app.request('/v1/versions', { token })).headers.get('api-version')).to.equal(GADGET_VERSIONS.renamed);
    await page.getByRole('link', { name: 'Done: back to API keys' }).click();
    await page.getByRole('row').filter({ hasText: 'Pinned' }).getByRole('cell', { name: GADGET_VERSIONS.renamed }).waitFor();
  });
});
