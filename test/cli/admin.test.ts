import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT_DIR } from '../../src/common/config.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { backend } from '../helpers/backend.js';
import { admin, outcomeOf } from '../helpers/processes.js';

async function workspace(plan: string): Promise<string> {
  const res = await admin(['workspace', 'create', '--name', `cli ${plan}`, '--plan', plan, '--json']);
  expect(res.code, res.stderr).to.equal(0);
  const body = JSON.parse(res.stdout) as { id: string; plan: string };
  expect(body.plan).to.equal(plan);
  return body.id;
}

async function refused(args: string[], reason: RegExp): Promise<void> {
  const res = await admin(args);
  expect(res.code, res.stdout).to.equal(1);
  expect(res.stdout).to.equal('');
  expect(res.stderr).to.match(reason);
}

describe('the admin command through npm, exactly as the README writes it', () => {
  const env = () => ({ ...process.env, ...backend().env });
  const npmAdmin = (args: string[]) => outcomeOf(spawn('npm', ['run', 'admin', '--', ...args], { cwd: ROOT_DIR, env: env() }));

  it('npx workspace-admin ... --json and npm run --silent admin -- ... --json print JSON alone on stdout, to pipe into jq', async () => {
    for (const command of [['npx', 'workspace-admin'], ['npm', 'run', '--silent', 'admin', '--']]) {
      const res = await outcomeOf(spawn(command[0]!, [...command.slice(1), 'workspace', 'list', '--json'], { cwd: ROOT_DIR, env: env() }));
      expect(res.code, res.stderr).to.equal(0);
      expect((JSON.parse(res.stdout) as { data: unknown[] }).data, command.join(' ')).to.be.an('array');
      expect(res.stderr, command.join(' ')).to.equal('');
    }
  });

  it('npm run admin -- ... works as npm runs any script: its banner, then the command\'s own output (no repository-wide json=true)', async () => {
    const res = await npmAdmin(['workspace', 'list', '--json']);
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.match(/^\n> workspace-api@[^\n]+ admin\n> node scripts\/admin\.mjs workspace list --json\n\n\{"data":/);
    expect(fs.existsSync(path.join(ROOT_DIR, '.npmrc')) ? fs.readFileSync(path.join(ROOT_DIR, '.npmrc'), 'utf8') : '').not.to.match(/^\s*json\s*=\s*true/m);
  });

  it('runs the bundled command (build/admin-cli.mjs, made from src/), which loads the .ts plugins when a command needs them', async () => {
    const ws = JSON.parse((await npmAdmin(['workspace', 'create', '--name', 'via npm', '--plan', 'pro', '--json'])).stdout.replace(/^[^{]*/, '')) as { id: string };
    const res = await npmAdmin(['key', 'create', '--workspace', ws.id, '--name', 'via npm', '--scopes', 'read:deals,write:invoices', '--json']);
    expect(res.code, res.stderr).to.equal(0);
    expect((JSON.parse(res.stdout.replace(/^[^{]*/, '')) as { scopes: string[] }).scopes).to.deep.equal(['read:deals', 'write:invoices']);
    expect(res.stdout).to.contain('node scripts/admin.mjs');
    expect(fs.existsSync(path.join(ROOT_DIR, 'build', 'admin-cli.mjs'))).to.equal(true);
    const refused = await npmAdmin(['key', 'create', '--workspace', ws.id, '--name', 'bad', '--scopes', 'read:nothing', '--json']);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain('refused: unknown scope read:nothing');
  });
});

describe('the admin command', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('creates a key that works, printing one JSON object with the token, and stores only a hash', async () => {
    const ws = await workspace('pro');
    const res = await admin(['key', 'create', '--workspace', ws, '--name', 'ci', '--scopes', 'read:deals,write:deals', '--json']);
    expect(res.code, res.stderr).to.equal(0);
    const key = JSON.parse(res.stdout) as { id: string; token: string; rate_limit: number; scopes: string[]; prefix: string };
    expect(key.token).to.match(/^wsk_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
    expect(key).to.include({ rate_limit: 60 });
    expect(key.prefix).to.equal(key.token.slice(0, 12));
    const stored = await app.deps.db('api_keys').first('*').where('id', key.id);
    expect(JSON.stringify(stored)).not.to.contain(key.token.slice(4));
    const before = (JSON.parse((await admin(['key', 'list', '--workspace', ws, '--json'])).stdout) as { data: Array<{ last_used_at: string | null }> }).data;
    expect(before[0]?.last_used_at).to.equal(null);
    const health = await app.request('/v1/health', { token: key.token });
    expect(health.status).to.equal(200);
    expect(health.headers.get('x-ratelimit-limit')).to.equal('60');
    await waitFor(async () => (await app.deps.db('api_keys').first('last_used_at').where('id', key.id))?.last_used_at != null, 2000, 'last_used_at');
    const after = (JSON.parse((await admin(['key', 'list', '--workspace', ws, '--json'])).stdout) as { data: Array<{ last_used_at: string | null }> }).data;
    expect(Date.parse(String(after[0]?.last_used_at))).to.be.closeTo(Date.now(), 60_000);
  });

  it('makes a test key with --mode test (docs/reference.md section 21), lists both modes, and keeps the test twin out of sight', async () => {
    const ws = await workspace('starter');
    const res = await admin(['key', 'create', '--workspace', ws, '--name', 'ci', '--scopes', 'read:deals', '--mode', 'test', '--json']);
    expect(res.code, res.stderr).to.equal(0);
    const key = JSON.parse(res.stdout) as { token: string; mode: string; workspace_id: string };
    expect(key.token).to.match(/^wsk_test_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
    expect(key.mode).to.equal('test');
    expect(key.workspace_id).to.equal(ws);
    const text = await admin(['key', 'create', '--workspace', ws, '--name', 'ci2', '--scopes', 'read:deals', '--mode', 'test']);
    expect(text.stdout).to.match(/^created test key key_/);
    expect(((await (await app.request('/v1/health', { token: key.token })).json()) as { livemode: boolean }).livemode).to.equal(false);
    await refused(['key', 'create', '--workspace', ws, '--name', 'x', '--scopes', 'read:deals', '--mode', 'sandbox'], /mode must be equal to one of the allowed values/);
    expect((await admin(['key', 'create', '--workspace', ws, '--name', 'live', '--scopes', 'read:deals', '--json'])).code).to.equal(0);
    const listed = (JSON.parse((await admin(['key', 'list', '--workspace', ws, '--json'])).stdout) as { data: Array<{ name: string; mode: string }> }).data;
    expect(listed.map((k) => [k.name, k.mode])).to.deep.equal([['ci', 'test'], ['ci2', 'test'], ['live', 'live']]);
    // The twin is no workspace of its own to an operator.
    const workspaces = (JSON.parse((await admin(['workspace', 'list', '--json'])).stdout) as { data: Array<{ id: string }> }).data.map((w) => w.id);
    expect(workspaces).to.include(ws).and.not.include(`${ws}_test`);
    await refused(['key', 'create', '--workspace', `${ws}_test`, '--name', 'x', '--scopes', 'read:deals'], /unknown workspace/);
    await refused(['workspace', 'set-plan', `${ws}_test`, 'pro'], /unknown workspace/);
    // A plan change reaches both modes: the test key may now write.
    expect((await admin(['workspace', 'set-plan', ws, 'pro'])).code).to.equal(0);
    expect((await admin(['key', 'create', '--workspace', ws, '--name', 'writer', '--scopes', 'write:deals', '--mode', 'test'])).code).to.equal(0);
  });

  it('refuses write:, delete: and admin: scopes on a read_only plan, naming the reason', async () => {
    for (const plan of ['free', 'starter']) {
      const ws = await workspace(plan);
      for (const scope of ['write:deals', 'delete:deals', 'admin:keys']) {
        await refused(['key', 'create', '--workspace', ws, '--name', 'x', '--scopes', `read:deals,${scope}`], new RegExp(`read_only: scope ${scope} is not allowed`));
      }
      const ok = await admin(['key', 'create', '--workspace', ws, '--name', 'reader', '--scopes', 'read:deals,webhooks:manage', '--json']);
      expect(ok.code, ok.stderr).to.equal(0);
    }
  });

  it('creates no key on a plan without API access', async () => {
    await app.deps.db('plans').insert({ name: 'closed_test', api_access: 'none', max_keys: 5, webhooks_per_month: 0 }).onConflict('name').ignore();
    const ws = await workspace('closed_test');
    await refused(['key', 'create', '--workspace', ws, '--name', 'x', '--scopes', 'read:deals'], /has no API access/);
  });

  it('caps live keys at the plan’s max_keys, and a revoked key frees its place', async () => {
    const ws = await workspace('free');
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await admin(['key', 'create', '--workspace', ws, '--name', `k${i}`, '--scopes', 'read:deals', '--json']);
      expect(res.code, res.stderr).to.equal(0);
      ids.push((JSON.parse(res.stdout) as { id: string }).id);
    }
    await refused(['key', 'create', '--workspace', ws, '--name', 'k3', '--scopes', 'read:deals'], /allows 2 live keys/);
    expect((await admin(['key', 'revoke', String(ids[0])])).code).to.equal(0);
    expect((await admin(['key', 'create', '--workspace', ws, '--name', 'k3', '--scopes', 'read:deals'])).code).to.equal(0);
    const list = await admin(['key', 'list', '--workspace', ws, '--json']);
    const keys = (JSON.parse(list.stdout) as { data: Array<{ id: string; revoked_at: string | null; token?: string }> }).data;
    expect(keys).to.have.length(3);
    expect(keys.filter((k) => k.revoked_at === null)).to.have.length(2);
    expect(keys.every((k) => k.token === undefined)).to.equal(true);
  });

  it('accepts rate limits 1 to 6000 and refuses anything else', async () => {
    const ws = await workspace('enterprise');
    for (const limit of ['1', '6000']) {
      const res = await admin(['key', 'create', '--workspace', ws, '--name', `r${limit}`, '--scopes', 'read:deals', '--rate-limit', limit, '--json']);
      expect(res.code, res.stderr).to.equal(0);
      expect((JSON.parse(res.stdout) as { rate_limit: number }).rate_limit).to.equal(Number(limit));
    }
    for (const [limit, reason] of [['0', /rate limit must be >= 1/], ['6001', /rate limit must be <= 6000/], ['-5', /rate limit must be >= 1/], ['1.5', /rate limit must be integer/], ['abc', /rate limit must be integer/]] as const) {
      await refused(['key', 'create', '--workspace', ws, '--name', 'r', '--scopes', 'read:deals', `--rate-limit=${limit}`], reason);
    }
    const live = await app.deps.db('api_keys').count({ n: '*' }).where('workspace_id', ws).first();
    expect(Number(live?.n)).to.equal(2, 'no refused key was written');
  });

  it('pins a key to the API version asked for (--api-version), lists it, and refuses one the API does not have', async () => {
    const ws = await workspace('pro');
    const made = await admin(['key', 'create', '--workspace', ws, '--name', 'pinned', '--scopes', 'read:deals', '--api-version', '2026-11-21', '--json']);
    expect(made.code, made.stderr).to.equal(0);
    expect((JSON.parse(made.stdout) as { api_version: string }).api_version).to.equal('2026-11-21');
    const listed = await admin(['key', 'list', '--workspace', ws]);
    expect(listed.stdout).to.contain('2026-11-21');
    await refused(['key', 'create', '--workspace', ws, '--name', 'later', '--scopes', 'read:deals', '--api-version', '2027-01-15'], /api_version must be one of this API's versions: 2026-11-21/);
    const keys = await app.deps.db('api_keys').count({ n: '*' }).where('workspace_id', ws).first();
    expect(Number(keys?.n)).to.equal(1, 'the refused key was not written');
  });

  it('makes keys that expire (--expires-in-days), and sets the workspace key lifetime they must keep to', async () => {
    const ws = await workspace('pro');
    const made = await admin(['key', 'create', '--workspace', ws, '--name', 'short', '--scopes', 'read:deals', '--expires-in-days', '5', '--json']);
    expect(made.code, made.stderr).to.equal(0);
    const key = JSON.parse(made.stdout) as { id: string; expires_at: string };
    expect(Date.parse(key.expires_at) - Date.now()).to.be.closeTo(5 * 24 * 3600 * 1000, 60_000);
    const text = await admin(['key', 'list', '--workspace', ws]);
    expect(text.stdout).to.contain(`live, expires ${key.expires_at}`);
    await refused(['key', 'create', '--workspace', ws, '--name', 'x', '--scopes', 'read:deals', '--expires-in-days', '0'], /expires_in_days must be >= 1/);

    const set = await admin(['workspace', 'set-key-lifetime', ws, '30', '--json']);
    expect(set.code, set.stderr).to.equal(0);
    expect(JSON.parse(set.stdout)).to.deep.equal({ id: ws, max_key_lifetime_days: 30, previous: null });
    await refused(['key', 'create', '--workspace', ws, '--name', 'forever', '--scopes', 'read:deals'], /expires_in_days must be from 1 to 30: this workspace's keys must expire within 30 days/);
    await refused(['key', 'create', '--workspace', ws, '--name', 'long', '--scopes', 'read:deals', '--expires-in-days', '31'], /must be from 1 to 30/);
    expect((await admin(['key', 'create', '--workspace', ws, '--name', 'month', '--scopes', 'read:deals', '--expires-in-days', '30'])).code).to.equal(0);
    for (const bad of ['0', '3651', 'ten']) {
      const res = await admin(['workspace', 'set-key-lifetime', ws, bad]);
      expect(res.code).to.equal(2);
      expect(res.stderr).to.contain('DAYS must be a whole number from 1 to 3650, or none');
    }
    expect((await admin(['workspace', 'set-key-lifetime', ws, 'none'])).stdout).to.contain('key lifetime 30 days -> no limit');
    expect((await admin(['key', 'create', '--workspace', ws, '--name', 'forever', '--scopes', 'read:deals'])).code).to.equal(0);
    const audit = (await app.deps.db('audit_log').where({ workspace_id: ws, action: 'workspace.key_policy_changed' }).count({ n: '*' }).first()) as { n: number | string };
    expect(Number(audit.n)).to.equal(2);
  });

  it('refuses unknown scopes, workspaces and plans, each with its reason', async () => {
    const ws = await workspace('pro');
    await refused(['key', 'create', '--workspace', ws, '--name', 'x', '--scopes', 'read:everything'], /unknown scope read:everything/);
    await refused(['key', 'create', '--workspace', 'ws_nope', '--name', 'x', '--scopes', 'read:deals'], /unknown workspace "ws_nope"/);
    await refused(['workspace', 'create', '--name', 'x', '--plan', 'platinum'], /unknown plan "platinum"/);
  });

  it('creates users who can sign in, lists, resets and disables them, each with --json', async () => {
    const ws = await workspace('starter');
    const made = await admin(['user', 'create', '--workspace', ws, '--email', 'Ada@Example.com', '--name', 'Ada', '--role', 'viewer', '--json']);
    expect(made.code, made.stderr).to.equal(0);
    const user = JSON.parse(made.stdout) as { id: string; email: string; password: string; role: string };
    expect(user).to.include({ email: 'ada@example.com', role: 'viewer' });
    expect(user.password).to.match(/^[A-Za-z0-9_-]{20}$/);
    const stored = (await app.deps.db('users').first('password_hash').where('id', user.id)) as { password_hash: string };
    expect(stored.password_hash).to.match(/^scrypt\$32768\$8\$1\$/);
    expect(stored.password_hash).not.to.contain(user.password);
    const signIn = (password: string) => app.request('/internal/v1/session', { method: 'POST', json: { email: 'ada@example.com', password }, headers: { origin: app.url } });
    expect((await signIn(user.password)).status).to.equal(200);

    const listed = JSON.parse((await admin(['user', 'list', '--workspace', ws, '--json'])).stdout) as { data: Array<{ id: string; disabled_at: string | null; password?: string }> };
    expect(listed.data.map((u) => u.id)).to.deep.equal([user.id]);
    expect(listed.data[0]?.password).to.equal(undefined);

    const reset = await admin(['user', 'reset-password', user.id, '--json']);
    expect(reset.code, reset.stderr).to.equal(0);
    const { password } = JSON.parse(reset.stdout) as { password: string };
    expect(password).not.to.equal(user.password);
    expect((await signIn(user.password)).status).to.equal(401);
    expect((await signIn(password)).status).to.equal(200);

    const disabled = await admin(['user', 'disable', user.id, '--json']);
    expect(disabled.code, disabled.stderr).to.equal(0);
    expect((JSON.parse(disabled.stdout) as { disabled_at: string }).disabled_at).to.be.a('string');
    expect((await signIn(password)).status).to.equal(401);
  });

  it('refuses a bad user: a taken email, a bad address or role, an unknown workspace or user', async () => {
    const ws = await workspace('pro');
    expect((await admin(['user', 'create', '--workspace', ws, '--email', 'taken@example.com'])).code).to.equal(0);
    await refused(['user', 'create', '--workspace', ws, '--email', 'TAKEN@example.com'], /taken@example.com already has an account/);
    await refused(['user', 'create', '--workspace', ws, '--email', 'not-an-address'], /"not-an-address" is not an email address/);
    await refused(['user', 'create', '--workspace', ws, '--email', 'x@example.com', '--role', 'owner'], /unknown role "owner"/);
    await refused(['user', 'create', '--workspace', 'ws_nope', '--email', 'y@example.com'], /unknown workspace "ws_nope"/);
    await refused(['user', 'reset-password', 'usr_nope'], /unknown user "usr_nope"/);
    await refused(['user', 'disable', 'usr_nope'], /unknown user "usr_nope"/);
    const users = await app.deps.db('users').where({ workspace_id: ws }).count({ n: '*' }).first();
    expect(Number(users?.n)).to.equal(1, 'no refused user was written');
  });

  it('lists workspaces and moves one to another plan', async () => {
    const ws = await workspace('free');
    const list = JSON.parse((await admin(['workspace', 'list', '--json'])).stdout) as { data: Array<{ id: string; plan: string; live_keys: number; users: number }> };
    expect(list.data.find((w) => w.id === ws)).to.include({ plan: 'free', live_keys: 0, users: 0 });
    const moved = await admin(['workspace', 'set-plan', ws, 'pro', '--json']);
    expect(moved.code, moved.stderr).to.equal(0);
    expect(JSON.parse(moved.stdout)).to.deep.equal({ id: ws, plan: 'pro', previous: 'free' });
    await refused(['workspace', 'set-plan', ws, 'platinum'], /unknown plan "platinum"/);
    await refused(['workspace', 'set-plan', 'ws_nope', 'pro'], /unknown workspace "ws_nope"/);
    const usage = await admin(['workspace', 'set-plan', ws]);
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.contain('Usage:');
  });

  it('explains its usage on a command it does not know', async () => {
    const res = await admin(['key', 'rotate']);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.contain('Usage:');
  });

  it('tells a flag given empty (or blank) from one left out, and makes nothing', async () => {
    const before = await admin(['workspace', 'list', '--json']);
    for (const [args, message] of [
      [['workspace', 'create', '--name', '', '--plan', 'pro'], '--name is empty: give it a value'],
      [['workspace', 'create', '--name', '   ', '--plan', 'pro'], '--name is empty: give it a value'],
      [['workspace', 'create', '--plan', 'pro'], 'missing --name'],
    ] as const) {
      const res = await admin([...args]);
      expect(res.code, res.stderr).to.equal(2);
      expect(res.stderr.split('\n')[0]).to.equal(message);
    }
    expect((await admin(['workspace', 'list', '--json'])).stdout).to.equal(before.stdout);
  });
});
