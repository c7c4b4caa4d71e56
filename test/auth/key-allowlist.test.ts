import { expect } from 'chai';
import { allowlist, allowlistProblems } from '../../src/auth/allowlist.js';
import { internal, person, type Person } from '../helpers/admin.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

type Json = Record<string, unknown>;

describe('IP allowlists (auth/allowlist.ts)', () => {
  it('matches addresses and CIDR ranges of both families, an IPv4-mapped IPv6 address as its IPv4 one', () => {
    const allows = allowlist(['203.0.113.7', '198.51.100.0/24', '2001:db8::/32', '::1']);
    for (const yes of ['203.0.113.7', '198.51.100.0', '198.51.100.255', '2001:db8::1', '2001:db8:ffff::', '::ffff:203.0.113.7', '::1']) expect(allows(yes), yes).to.equal(true);
    for (const no of ['203.0.113.8', '198.51.101.0', '2001:db9::1', '127.0.0.1', '::2', 'garbage', '']) expect(allows(no), no).to.equal(false);
    // A range written IPv4-mapped holds the IPv4 addresses it maps.
    const mapped = allowlist(['::ffff:192.0.2.0/120']);
    for (const yes of ['192.0.2.1', '::ffff:192.0.2.200']) expect(mapped(yes), yes).to.equal(true);
    expect(mapped('192.0.3.1')).to.equal(false);
    // An entry stored before addresses were read strictly admits nobody, not the 8.0.0.1 ipaddr.js would read.
    const legacy = allowlist(['010.0.0.1', '010.0.0.0/8', '203.0.113.7']);
    for (const no of ['8.0.0.1', '10.0.0.1', '8.1.2.3']) expect(legacy(no), no).to.equal(false);
    expect(legacy('203.0.113.7')).to.equal(true);
  });

  it('reads IPv4 as four decimal parts only: 010.0.0.1 is refused, not taken as 8.0.0.1, and a range with bits past its prefix names both readings', () => {
    const hint = 'write IPv4 as four decimal numbers from 0 to 255, without leading zeros (203.0.113.7)';
    expect(allowlistProblems(['010.0.0.1', '10.1', '0x0a.0.0.1', '010.0.0.0/8', '10.1.2.3/8', '2001:db8::1/32', 'fe80::1%eth0', '10.0.0.0/8', '::ffff:203.0.113.7', '0.0.0.0/0'])).to.deep.equal([
      { index: 0, message: `"010.0.0.1" is not an IPv4 or IPv6 address: ${hint}` },
      { index: 1, message: `"10.1" is not an IPv4 or IPv6 address: ${hint}` },
      { index: 2, message: `"0x0a.0.0.1" is not an IPv4 or IPv6 address: ${hint}` },
      { index: 3, message: `"010.0.0.0/8" is not an IPv4 or IPv6 range in CIDR notation (such as 203.0.113.0/24 or 2001:db8::/32): ${hint}` },
      { index: 4, message: '"10.1.2.3/8" has bits set past its /8 prefix: write 10.0.0.0/8 for the range, or 10.1.2.3 alone for the one address' },
      { index: 5, message: '"2001:db8::1/32" has bits set past its /32 prefix: write 2001:db8::/32 for the range, or 2001:db8::1 alone for the one address' },
      { index: 6, message: '"fe80::1%eth0" names a zone (%...), which is a network interface of one host: write the address without it' },
    ]);
  });

  it('names each entry that is not an address or a range', () => {
    expect(allowlistProblems(['203.0.113.7', 'example.com', '10.0.0.0/33', '2001:db8::/129', '2001:db8::/32'])).to.deep.equal([
      { index: 1, message: '"example.com" is not an IPv4 or IPv6 address' },
      { index: 2, message: '"10.0.0.0/33" is not an IPv4 or IPv6 range in CIDR notation (such as 203.0.113.0/24 or 2001:db8::/32)' },
      { index: 3, message: '"2001:db8::/129" is not an IPv4 or IPv6 range in CIDR notation (such as 203.0.113.0/24 or 2001:db8::/32)' },
    ]);
  });
});

/** docs/reference.md section 15: a key used from elsewhere than its allowlist is 403 ip_not_allowed. */
describe('a key with allowed_ips, over HTTP', () => {
  let app: TestApp;
  let direct: TestApp;
  let alice: Person;

  before(async () => {
    app = await startApp({ env: { TRUST_PROXY: 'true' } });
    // No proxy trusted: the socket's address counts, whatever X-Forwarded-For says.
    direct = await startApp();
    alice = await person(app);
  });
  after(async () => {
    await app.close();
    await direct.close();
  });

  const makeKey = (json: Json, who = alice) => internal(app, '/keys', { method: 'POST', json: { name: 'fenced', scopes: ['read:deals'], ...json }, cookie: who.cookie });
  const from = (token: string, ip: string, on = app) => on.request('/v1/deals', { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': ip } });

  it('admits requests from its addresses and ranges (IPv4 and IPv6), and refuses every other with 403 ip_not_allowed', async () => {
    const res = await makeKey({ allowed_ips: ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32'] });
    expect(res.status, await res.clone().text()).to.equal(201);
    const key = (await res.json()) as { token: string; allowed_ips: string[] };
    expect(key.allowed_ips).to.deep.equal(['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']);
    for (const ip of ['203.0.113.7', '198.51.100.42', '2001:db8::5', '::ffff:203.0.113.7']) expect((await from(key.token, ip)).status, ip).to.equal(200);
    for (const ip of ['203.0.113.8', '198.51.101.1', '2001:db9::5', '127.0.0.1']) {
      const body = await problem(await from(key.token, ip), 403, 'ip_not_allowed');
      expect(body.detail).to.equal(`This key may not be used from ${ip}: its allowlist does not include that address.`);
    }
  });

  it('takes the socket address when no proxy is trusted: X-Forwarded-For cannot talk its way in', async () => {
    const { token: loopbackToken, keyId } = await direct.workspaceWithKey({ scopes: ['read:deals'] });
    await direct.deps.db('api_keys').where({ id: keyId }).update({ allowed_ips: JSON.stringify(['203.0.113.7']) });
    const spoofed = await direct.workspaceWithKey({ scopes: ['read:deals'] });
    await direct.deps.db('api_keys').where({ id: spoofed.keyId }).update({ allowed_ips: JSON.stringify(['127.0.0.1']) });
    // (Set in the database before either key is first used: nothing cached.)
    await problem(await from(loopbackToken, '203.0.113.7', direct), 403, 'ip_not_allowed');
    expect((await from(spoofed.token, '203.0.113.7', direct)).status).to.equal(200);
  });

  it('behind a trusted proxy, takes the address the proxy appended, not one the client wrote before it, and the socket\'s for garbage', async () => {
    const res = await makeKey({ allowed_ips: ['203.0.113.7'] });
    const key = (await res.json()) as { id: string; token: string };
    // The client wrote the allowed address itself; the proxy appended the one it came from.
    await problem(await from(key.token, '203.0.113.7, 198.51.100.9'), 403, 'ip_not_allowed');
    expect((await from(key.token, '198.51.100.9, 203.0.113.7')).status).to.equal(200);
    // What no proxy appends counts as the socket's address: refused here, never a 500, and logged as an address.
    for (const garbage of ['not-an-address', 'x'.repeat(300), '203.0.113.7, unknown']) {
      const body = await problem(await from(key.token, garbage), 403, 'ip_not_allowed');
      expect(body.detail, garbage).to.match(/^This key may not be used from (127\.0\.0\.1|::1|::ffff:127\.0\.0\.1):/);
    }
    await app.close();
    app = await startApp({ env: { TRUST_PROXY: 'true' } });
    const logged = (await internal(app, `/keys/${key.id}/requests?limit=100`, { cookie: alice.cookie })).json() as Promise<{ data: Array<{ ip: string; status: number }> }>;
    expect((await logged).data.map((r) => r.ip).sort()).to.deep.equal(['127.0.0.1', '127.0.0.1', '127.0.0.1', '198.51.100.9', '203.0.113.7']);
    // Two proxies: the address the farther one appended.
    const twice = await startApp({ env: { TRUST_PROXY: 'true', TRUST_PROXY_HOPS: '2' } });
    try {
      expect((await from(key.token, '198.51.100.1, 203.0.113.7, 10.0.0.2', twice)).status).to.equal(200);
      await problem(await from(key.token, '203.0.113.7, 198.51.100.1, 10.0.0.2', twice), 403, 'ip_not_allowed');
    } finally {
      await twice.close();
    }
  });

  it('refuses a bad allowlist with 422 naming each entry, and writes no key', async () => {
    const before = Number(((await app.deps.db('api_keys').where({ workspace_id: alice.workspaceId }).count({ n: '*' })) as Array<{ n: number | string }>)[0]?.n);
    const bad = await problem(await makeKey({ allowed_ips: ['203.0.113.7', 'example.com', '10.0.0.0/33'] }), 422, 'validation_failed');
    expect(bad.errors?.map((e) => e.pointer)).to.deep.equal(['/allowed_ips/1', '/allowed_ips/2']);
    await problem(await makeKey({ allowed_ips: Array.from({ length: 21 }, (_, i) => `203.0.113.${i}`) }), 422, 'validation_failed');
    await problem(await makeKey({ allowed_ips: ['203.0.113.7', '203.0.113.7'] }), 422, 'validation_failed');
    await problem(await makeKey({ allowed_ips: [''] }), 422, 'validation_failed');
    await problem(await makeKey({ allowed_ips: '203.0.113.7' }), 422, 'validation_failed');
    // Read as some tools read them, these would admit 8.0.0.1 and the network 8.0.0.0/8.
    const octal = await problem(await makeKey({ allowed_ips: ['010.0.0.1', '010.0.0.0/8', '10.1.2.3/8'] }), 422, 'validation_failed');
    expect(octal.errors?.map((e) => e.pointer)).to.deep.equal(['/allowed_ips/0', '/allowed_ips/1', '/allowed_ips/2']);
    const after = Number(((await app.deps.db('api_keys').where({ workspace_id: alice.workspaceId }).count({ n: '*' })) as Array<{ n: number | string }>)[0]?.n);
    expect(after).to.equal(before);
  });

  it('changes with PATCH /internal/v1/keys/{id}: applied by the running server, null for anywhere, audited as key.updated', async () => {
    const key = (await (await makeKey({})).json()) as { id: string; token: string; allowed_ips: string[] | null };
    expect(key.allowed_ips).to.equal(null);
    expect((await from(key.token, '192.0.2.1')).status).to.equal(200);
    const patch = (json: Json, who = alice) => internal(app, `/keys/${key.id}`, { method: 'PATCH', json, cookie: who.cookie });
    const fenced = await patch({ allowed_ips: ['2001:db8::/32'] });
    expect(fenced.status, await fenced.clone().text()).to.equal(200);
    expect(((await fenced.json()) as Json).allowed_ips).to.deep.equal(['2001:db8::/32']);
    await waitFor(async () => (await from(key.token, '192.0.2.1')).status === 403, 1500, 'the allowlist applied within a second');
    expect((await from(key.token, '2001:db8::7')).status).to.equal(200);

    await problem(await patch({ allowed_ips: ['nope'] }), 422, 'validation_failed');
    await problem(await patch({}), 422, 'validation_failed');
    await problem(await patch({ name: 'renamed' }), 422, 'validation_failed');
    const viewer = await person(app, { workspaceId: alice.workspaceId, role: 'viewer' });
    await problem(await patch({ allowed_ips: null }, viewer), 403, 'insufficient_role');
    const bob = await person(app);
    await problem(await patch({ allowed_ips: null }, bob), 404, 'not_found');
    await problem(await internal(app, `/keys/${key.id}`, { method: 'PATCH', json: { allowed_ips: null }, cookie: alice.cookie, origin: null }), 403, 'forbidden_origin');

    expect((await patch({ allowed_ips: null })).status).to.equal(200);
    await waitFor(async () => (await from(key.token, '192.0.2.1')).status === 200, 1500, 'anywhere again within a second');
    const audit = (await (await internal(app, '/audit-log?action=key.updated', { cookie: alice.cookie })).json()) as { data: Array<{ target: Json; details: Json }> };
    expect(audit.data.filter((e) => e.target.id === key.id).map((e) => e.details.allowed_ips)).to.deep.equal([
      { from: ['2001:db8::/32'], to: null },
      { from: null, to: ['2001:db8::/32'] },
    ]);
  });
});
