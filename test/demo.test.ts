import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { waitFor } from './helpers/app.js';
import { checkedFetcher } from './helpers/contract.js';
import { startServer } from './helpers/processes.js';

describe('npm start on an empty database', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-demo-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('migrates, seeds a demo workspace with sample rows, prints a working key once, and seeds only once', async () => {
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'fresh.db')}` };
    const first = await startServer(env);
    let token: string | undefined;
    try {
      // The banner follows the "listening" line, possibly in a later chunk of stdout.
      await waitFor(() => /wsk_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}/.test(first.output()), 5000, 'the demo key banner');
      token = /wsk_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}/.exec(first.output())?.[0];
      expect(token, first.output()).to.be.a('string');
      const auth = { authorization: `Bearer ${token}` };
      // The sample rows too are held to the served document.
      const api = await checkedFetcher(first.url);
      const health = (await (await api('/v1/health', { headers: auth })).json()) as { workspace: { plan: string }; key: { scopes: string[] } };
      expect(health.workspace.plan).to.equal('pro');
      expect(health.key.scopes).to.have.length(11);
      let rows = 0;
      for (const resource of ['deals', 'leads', 'clients', 'proposals', 'invoices']) {
        const page = (await (await api(`/v1/${resource}?limit=200`, { headers: auth })).json()) as { data: unknown[] };
        expect(page.data.length, resource).to.be.greaterThan(0);
        rows += page.data.length;
      }
      expect(rows).to.be.at.least(200, 'a few hundred sample rows');
      // The Try: line works pasted into a shell as printed (the URL quoted: zsh globs an unquoted ?).
      const tryLine = /^Try: (curl .*)$/m.exec(first.output())?.[1] ?? '';
      expect(tryLine).to.contain('"http://');
      for (const shell of ['sh', 'bash', 'zsh'].filter((sh) => spawnSync('sh', ['-c', `command -v ${sh}`]).status === 0)) {
        const out = spawnSync(shell, ['-c', `${tryLine} -s`], { encoding: 'utf8' });
        expect(out.status, `${shell}: ${out.stderr}`).to.equal(0);
        expect((JSON.parse(out.stdout) as { data: unknown[] }).data, shell).to.have.length(2);
      }
      // The demo admin's sign-in is printed beside the key, once, and works on the internal API.
      await waitFor(() => /password: \S+/.test(first.output()), 5000, 'the demo admin banner');
      const email = /email: +(\S+)/.exec(first.output())?.[1];
      const password = /password: +(\S+)/.exec(first.output())?.[1];
      expect(email).to.equal('admin@example.com');
      const signIn = await api('/internal/v1/session', { method: 'POST', headers: { origin: first.url, 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
      expect(signIn.status).to.equal(200);
      expect(((await signIn.json()) as { user: { role: string } }).user.role).to.equal('admin');
      // The page says who made the demo key: the demo set-up, not an admin command nobody ran.
      const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
      const keys = (await (await api('/internal/v1/keys', { headers: { cookie } })).json()) as { data: Array<{ name: string; created_by: { type: string; label: string } | null }> };
      expect(keys.data.find((k) => k.name === 'demo key')?.created_by).to.deep.equal({ type: 'operator', id: null, label: 'demo set-up (first start)' });
      // Never into the JSON log stream: the banner goes to the terminal's stderr, stdout has neither secret.
      expect(first.stdout()).not.to.contain(String(password));
      expect(first.stdout()).not.to.contain(String(token));
    } finally {
      expect(await first.stop()).to.equal(0);
    }
    const second = await startServer(env);
    try {
      expect(second.output()).not.to.match(/wsk_/, 'no second demo key');
      expect(second.output()).not.to.contain('password:', 'no second demo admin');
      expect((await (await checkedFetcher(second.url))('/v1/health', { headers: { authorization: `Bearer ${token}` } })).status).to.equal(200);
    } finally {
      await second.stop();
    }
  });
});
