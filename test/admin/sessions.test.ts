import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { disableUser, resetPassword } from '../../src/admin/users.js';
import { internal, newAddress, person, sessionCookie, signIn } from '../helpers/admin.js';
import { manualClock, startApp, type TestApp } from '../helpers/app.js';
import { admin, startServer, type ServerProcess } from '../helpers/processes.js';
import { problem } from '../helpers/problem.js';

const HOUR = 60 * 60 * 1000;

describe('the administration area: sessions', () => {
  const clock = manualClock(Date.UTC(2026, 10, 22, 9));
  let app: TestApp;

  before(async () => {
    app = await startApp({ clock, env: { TRUST_PROXY: 'true' } });
  });
  after(() => app.close());

  it('signs in with the right password: the user and workspace, and a session cookie that is HttpOnly, SameSite=Strict, Path=/', async () => {
    const someone = await person(app, { role: 'viewer' });
    const res = await internal(app, '/session', { method: 'POST', json: { email: someone.email.toUpperCase(), password: someone.password }, ip: newAddress() });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { user: { id: string; email: string; role: string }; workspace: { id: string; plan: string } };
    expect(body.user).to.include({ id: someone.userId, email: someone.email, role: 'viewer' });
    expect(body.workspace).to.include({ id: someone.workspaceId, plan: 'pro' });
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).to.match(/^ws_session=[A-Za-z0-9_-]{43};/);
    // Attribute names are case-insensitive (RFC 6265); Koa's cookies writes them in lower case.
    expect(cookie).to.match(/; httponly(;|$)/i).and.match(/; samesite=strict(;|$)/i).and.match(/; path=\/(;|$)/i);
    expect(cookie).not.to.match(/; secure(;|$)/i);
    // It lasts as long as a session may (7 days), whatever the client's clock says of it.
    const expires = Date.parse(/; expires=([^;]+)/i.exec(cookie)?.[1] ?? '');
    expect(expires - Date.now()).to.be.within(7 * 24 * 3600 * 1000 - 60_000, 7 * 24 * 3600 * 1000 + 1000);
    // Another cookie named like it (or a longer one) is not the session.
    const value = sessionCookie(res).slice('ws_session='.length);
    await problem(await internal(app, '/session', { cookie: `xws_session=${value}; ws_sessionx=${value}` }), 401, 'not_signed_in');
    expect((await internal(app, '/session', { cookie: `theme=dark; ws_session=${value}; lang=en` })).status).to.equal(200);
    const me = await internal(app, '/session', { cookie: sessionCookie(res) });
    expect(me.status).to.equal(200);
    expect(await me.json()).to.deep.equal(body);
    // The session is stored hashed: the cookie's value is nowhere in the table.
    const rows = (await app.deps.db('sessions').select('id_hash')) as Array<{ id_hash: string }>;
    expect(rows.some((r) => r.id_hash === value)).to.equal(false);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.id_hash))).to.equal(true);
  });

  it('adds Secure to the cookie when COOKIE_SECURE=true', async () => {
    const secure = await startApp({ env: { COOKIE_SECURE: 'true' } });
    try {
      const someone = await person(secure);
      const res = await internal(secure, '/session', { method: 'POST', json: { email: someone.email, password: someone.password } });
      expect(res.headers.get('set-cookie')).to.match(/; secure(;|$)/i);
    } finally {
      await secure.close();
    }
  });

  it('adds Secure to the cookie when the request came over https: X-Forwarded-Proto behind TRUST_PROXY, never without it', async () => {
    const someone = await person(app);
    const viaProxy = await internal(app, '/session', { method: 'POST', json: { email: someone.email, password: someone.password }, ip: newAddress(), origin: app.url.replace('http:', 'https:'), headers: { 'x-forwarded-proto': 'https' } });
    expect(viaProxy.status).to.equal(200);
    expect(viaProxy.headers.get('set-cookie')).to.match(/; secure(;|$)/i);
    const untrusted = await startApp();
    try {
      const other = await person(untrusted);
      const forged = await internal(untrusted, '/session', { method: 'POST', json: { email: other.email, password: other.password }, headers: { 'x-forwarded-proto': 'https' } });
      expect(forged.status).to.equal(200);
      expect(forged.headers.get('set-cookie')).not.to.match(/; secure(;|$)/i);
    } finally {
      await untrusted.close();
    }
  });

  it('adds Secure to the cookie set over a TLS connection', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=127.0.0.1', '-days', '1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
    const server = https.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) }, app.handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const someone = await person(app);
      const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const body = JSON.stringify({ email: someone.email, password: someone.password });
      const cookie = await new Promise<string>((resolve, reject) => {
        const req = https.request(`${origin}/internal/v1/session`, { method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json', origin, 'x-forwarded-for': newAddress() } }, (res) => {
          res.resume();
          resolve(String(res.headers['set-cookie'] ?? ''));
        });
        req.on('error', reject);
        req.end(body);
      });
      expect(cookie).to.match(/^ws_session=[A-Za-z0-9_-]{43};.*; secure(;|$)/i);
    } finally {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers a wrong password and an unknown email alike: same status, same body, about the same time', async () => {
    const someone = await person(app);
    const timeOf = async (email: string) => {
      const started = performance.now();
      const res = await internal(app, '/session', { method: 'POST', json: { email, password: 'not the password' }, ip: newAddress() });
      const elapsed = performance.now() - started;
      const body = (await problem(res, 401, 'invalid_credentials')) as unknown as Record<string, unknown>;
      delete body.request_id;
      return { elapsed, body, cookie: res.headers.get('set-cookie') };
    };
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 3; i++) {
      const a = await timeOf(someone.email);
      const b = await timeOf(`nobody${i}@example.com`);
      expect(a.body).to.deep.equal(b.body);
      expect(a.cookie).to.equal(null);
      expect(b.cookie).to.equal(null);
      wrong.push(a.elapsed);
      unknown.push(b.elapsed);
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[1] as number;
    // Both run one scrypt (tens of milliseconds); an unknown email skipping it would answer in a few.
    expect(median(unknown)).to.be.greaterThan(median(wrong) * 0.5, `wrong ${wrong.map(Math.round).join(',')} ms, unknown ${unknown.map(Math.round).join(',')} ms`);
    expect(median(wrong)).to.be.greaterThan(median(unknown) * 0.5);
  });

  it('ends a session after 12 hours without use, and after 7 days in any case (injected clock)', async () => {
    const someone = await person(app);
    clock.advance(11 * HOUR);
    expect((await internal(app, '/session', { cookie: someone.cookie })).status).to.equal(200);
    clock.advance(12 * HOUR - 1000);
    expect((await internal(app, '/session', { cookie: someone.cookie })).status, 'used within 12 h').to.equal(200);
    clock.advance(12 * HOUR);
    await problem(await internal(app, '/session', { cookie: someone.cookie }), 401, 'not_signed_in');

    // Used every 11 hours, it lives 7 days (168 h), not an hour more.
    const busy = await person(app);
    for (let hours = 11; hours <= 165; hours += 11) {
      clock.advance(11 * HOUR);
      expect((await internal(app, '/session', { cookie: busy.cookie })).status, `after ${hours} h`).to.equal(200);
    }
    clock.advance(3 * HOUR);
    await problem(await internal(app, '/session', { cookie: busy.cookie }), 401, 'not_signed_in');
  });

  it('signs out on the server too: the old cookie opens nothing afterwards', async () => {
    const someone = await person(app);
    const out = await internal(app, '/session', { method: 'DELETE', cookie: someone.cookie });
    expect(out.status).to.equal(204);
    expect(out.headers.get('set-cookie')).to.match(/^ws_session=; path=\/; expires=Thu, 01 Jan 1970 00:00:00 GMT; samesite=strict; httponly$/);
    const after = await problem(await internal(app, '/session', { cookie: someone.cookie }), 401, 'not_signed_in');
    expect(after.detail).to.contain('sign in again');
    expect((await internal(app, '/session', { method: 'DELETE', cookie: someone.cookie })).status, 'again: still 204').to.equal(204);
  });

  const attempt = (email: string, password: string, ip: string) => internal(app, '/session', { method: 'POST', json: { email, password }, ip });

  it('throttles sign-ins from one address: more than 10 failures in 15 minutes, for any emails, get 429 with Retry-After, the right password included', async () => {
    const ip = newAddress();
    for (let i = 0; i < 10; i++) await problem(await attempt(`guess${i}@example.com`, 'x', ip), 401, 'invalid_credentials');
    const other = await person(app);
    const throttled = await attempt(other.email, other.password, ip);
    await problem(throttled, 429, 'rate_limited');
    expect(Number(throttled.headers.get('retry-after'))).to.be.greaterThan(0).and.at.most(15 * 60);
    // Another address is not affected; this one is let in once the window has passed.
    await signIn(app, other.email, other.password, newAddress());
    clock.advance(15 * 60 * 1000 + 1000);
    await signIn(app, other.email, other.password, ip);
  });

  it('throttles one email from one address after 10 failures, while its owner signs in from a clean address', async () => {
    const someone = await person(app);
    const ip = newAddress();
    for (let i = 0; i < 10; i++) await problem(await attempt(someone.email, `wrong ${i}`, ip), 401, 'invalid_credentials');
    await problem(await attempt(someone.email, someone.password, ip), 429, 'rate_limited');
    await signIn(app, someone.email, someone.password, newAddress());
  });

  it('never locks an email out from many addresses: the right password from a clean address signs in, while addresses that failed wait longer and longer', async () => {
    const someone = await person(app);
    const guessers = Array.from({ length: 10 }, () => newAddress());
    for (const [i, ip] of guessers.entries()) await problem(await attempt(someone.email, `wrong ${i}`, ip), 401, 'invalid_credentials');
    // The owner, from an address with no failures: in at once.
    await signIn(app, someone.email, someone.password, newAddress());
    // A guesser must wait after the email's last failure, and the wait doubles with each failure: 1, 2, 4, 8 s.
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const ip = guessers[i % guessers.length] ?? '';
      const refused = await attempt(someone.email, `again ${i}`, ip);
      await problem(refused, 429, 'rate_limited');
      const wait = Number(refused.headers.get('retry-after'));
      waits.push(wait);
      expect((await problem(await attempt(someone.email, `again ${i}`, ip), 429, 'rate_limited')).detail).to.contain('several addresses');
      clock.advance(wait * 1000);
      await problem(await attempt(someone.email, `again ${i}`, ip), 401, 'invalid_credentials');
    }
    expect(waits).to.deep.equal([1, 2, 4, 8]);
    // Even now, and with a guesser's address the right password only waits: it is never locked out.
    const refused = await attempt(someone.email, someone.password, guessers[5] ?? '');
    await problem(refused, 429, 'rate_limited');
    clock.advance(Number(refused.headers.get('retry-after')) * 1000);
    await signIn(app, someone.email, someone.password, guessers[5]);
    await signIn(app, someone.email, someone.password, newAddress());
  });

  it('refuses a malformed sign-in with 422 and a clear error, and answers 401 not_signed_in without a cookie', async () => {
    const bad = await problem(await internal(app, '/session', { method: 'POST', json: { email: 'a@example.com' } }), 422, 'validation_failed');
    expect(JSON.stringify(bad.errors)).to.contain('password');
    const none = await problem(await internal(app, '/session'), 401, 'not_signed_in');
    expect(none.detail).to.contain('Sign in');
  });

  it('ends every session of a user given a new password or disabled, at once', async () => {
    const someone = await person(app);
    const second = await signIn(app, someone.email, someone.password);
    const { password } = await resetPassword(app.deps.db, someone.userId);
    await problem(await internal(app, '/session', { cookie: someone.cookie }), 401, 'not_signed_in');
    await problem(await internal(app, '/session', { cookie: second }), 401, 'not_signed_in');
    await problem(await internal(app, '/session', { method: 'POST', json: { email: someone.email, password: someone.password }, ip: newAddress() }), 401, 'invalid_credentials');
    const fresh = await signIn(app, someone.email, password);
    await disableUser(app.deps.db, someone.userId);
    await problem(await internal(app, '/session', { cookie: fresh }), 401, 'not_signed_in');
    await problem(await internal(app, '/session', { method: 'POST', json: { email: someone.email, password }, ip: newAddress() }), 401, 'invalid_credentials');
  });

  describe('with a second server process', () => {
    let other: ServerProcess;
    let otherApp: TestApp;
    before(async () => {
      otherApp = await startApp();
      other = await startServer();
    });
    after(async () => {
      await other.stop();
      await otherApp.close();
    });

    it("refuses a disabled user's open session on its next request there (the admin command disables it)", async () => {
      const someone = await person(otherApp);
      const headers = { cookie: someone.cookie };
      expect((await fetch(`${other.url}/internal/v1/session`, { headers })).status).to.equal(200);
      const res = await admin(['user', 'disable', someone.userId]);
      expect(res.code, res.stderr).to.equal(0);
      expect(res.stdout).to.contain(`disabled user ${someone.userId}`);
      expect((await fetch(`${other.url}/internal/v1/session`, { headers })).status).to.equal(401);
    });
  });
});
