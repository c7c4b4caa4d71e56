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
    expect(cookie).to.contain('; HttpOnly').and.contain('; SameSite=Strict').and.contain('; Path=/');
    expect(cookie).not.to.contain('Secure');
    const me = await internal(app, '/session', { cookie: sessionCookie(res) });
    expect(me.status).to.equal(200);
    expect(await me.json()).to.deep.equal(body);
    // The session is stored hashed: the cookie's value is nowhere in the table.
    const value = sessionCookie(res).slice('ws_session='.length);
    const rows = (await app.deps.db('sessions').select('id_hash')) as Array<{ id_hash: string }>;
    expect(rows.some((r) => r.id_hash === value)).to.equal(false);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.id_hash))).to.equal(true);
  });

  it('adds Secure to the cookie when COOKIE_SECURE=true', async () => {
    const secure = await startApp({ env: { COOKIE_SECURE: 'true' } });
    try {
      const someone = await person(secure);
      const res = await internal(secure, '/session', { method: 'POST', json: { email: someone.email, password: someone.password } });
      expect(res.headers.get('set-cookie')).to.match(/; Secure$/);
    } finally {
      await secure.close();
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
    expect(out.headers.get('set-cookie')).to.match(/^ws_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
    const after = await problem(await internal(app, '/session', { cookie: someone.cookie }), 401, 'not_signed_in');
    expect(after.detail).to.contain('sign in again');
    expect((await internal(app, '/session', { method: 'DELETE', cookie: someone.cookie })).status, 'again: still 204').to.equal(204);
  });

  it('throttles sign-ins: more than 10 failures in 15 minutes for one email, or from one address, get 429 with Retry-After', async () => {
    const someone = await person(app);
    for (let i = 0; i < 10; i++) {
      await problem(await internal(app, '/session', { method: 'POST', json: { email: someone.email, password: `wrong ${i}` }, ip: newAddress() }), 401, 'invalid_credentials');
    }
    // From yet another address, and with the right password: the email is throttled.
    const throttled = await internal(app, '/session', { method: 'POST', json: { email: someone.email, password: someone.password }, ip: newAddress() });
    await problem(throttled, 429, 'rate_limited');
    const wait = Number(throttled.headers.get('retry-after'));
    expect(wait).to.be.greaterThan(0).and.at.most(15 * 60);
    clock.advance(15 * 60 * 1000 + 1000);
    await signIn(app, someone.email, someone.password);

    const ip = newAddress();
    for (let i = 0; i < 10; i++) {
      await problem(await internal(app, '/session', { method: 'POST', json: { email: `guess${i}@example.com`, password: 'x' }, ip }), 401, 'invalid_credentials');
    }
    const other = await person(app);
    await problem(await internal(app, '/session', { method: 'POST', json: { email: other.email, password: other.password }, ip }), 429, 'rate_limited');
    // Another address is not affected.
    await signIn(app, other.email, other.password, newAddress());
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
