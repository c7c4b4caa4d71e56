import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import knex, { type Knex } from 'knex';
import { loadConfig } from '../../src/common/config.js';
import { knexSettings } from '../../src/db/connect.js';
import { decodeKey } from '../../src/common/config.js';
import { createKeyring, keyId, newKey } from '../../src/secrets/keyring.js';
import { up as sealMigration, down as unsealMigration } from '../../migrations/20261124000000_sealed_secrets.js';
import { up as sealUrls, down as unsealUrls } from '../../migrations/20261129000000_url_credentials.js';
import { backend, isolatedDatabase } from '../helpers/backend.js';
import { admin, run, startServer, type ServerProcess } from '../helpers/processes.js';
import { startReceiver, verified, type Receiver } from '../helpers/receiver.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Webhook secrets at rest (docs/reference.md section 12): sealed with AES-256-GCM under SECRET_KEYS,
 * tried through real server processes, the admin command and a look at the rows themselves.
 */
describe('webhook secrets encrypted at rest (SECRET_KEYS)', function () {
  this.timeout(90_000);
  const [k1, k2, k3] = [newKey(), newKey(), newKey()];
  const idOf = (key: string) => keyId(decodeKey(key)!);
  let storage: Awaited<ReturnType<typeof isolatedDatabase>>;
  let receiver: Receiver;
  let db: Knex;
  let token: string;
  const base = () => ({ ...storage.env, WORKER: 'inline', WEBHOOK_ALLOW_PRIVATE: 'true', DEMO: 'false' });

  before(async () => {
    storage = await isolatedDatabase('sealed');
    receiver = await startReceiver();
    const ws = await admin(['workspace', 'create', '--name', 'Sealed', '--plan', 'pro', '--json'], { ...storage.env, SECRET_KEYS: k1 });
    expect(ws.code, ws.stderr).to.equal(0);
    const key = await admin(['key', 'create', '--workspace', (JSON.parse(ws.stdout) as Json).id, '--name', 'sealed', '--scopes', 'read:clients,write:clients,webhooks:manage', '--json'], { ...storage.env, SECRET_KEYS: k1 });
    expect(key.code, key.stderr).to.equal(0);
    token = (JSON.parse(key.stdout) as Json).token;
    db = knex(knexSettings(loadConfig({ ...backend().env, ...storage.env, SECRET_KEYS: k1 }).database));
  });
  after(async () => {
    await db?.destroy();
    await receiver?.close();
    await storage?.drop();
  });

  const call = async (server: ServerProcess, method: string, url: string, json?: unknown) => {
    const res = await fetch(`${server.url}/v1${url}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(json ? { body: JSON.stringify(json) } : {}) });
    return { status: res.status, body: (res.status === 204 ? {} : await res.json()) as Json };
  };

  /**
   * Writes a client and returns the delivery of its client.created to `hookPath`, checked against
   * `secret` alone. Found by the client's name: a path that other writes reach too may still be
   * getting theirs.
   */
  async function deliveredWith(server: ServerProcess, hookPath: string, secret: string, name: string): Promise<void> {
    receiver.secrets.set(hookPath, [secret]);
    expect((await call(server, 'POST', '/clients', { name })).status).to.equal(201);
    const [delivery] = await receiver.waitFor(1, (r) => r.path === hookPath && (JSON.parse(r.body) as Json).data?.object?.name === name);
    expect(verified(secret, delivery!).data.object.name).to.equal(name);
    expect(receiver.rejected).to.deep.equal([]);
  }

  it('stores no secret in clear: a dump of webhook_subscriptions holds neither the current nor the rotated-out secret', async () => {
    const server = await startServer({ ...base(), SECRET_KEYS: k1 });
    try {
      const created = await call(server, 'POST', '/webhooks', { url: `${receiver.url}/dump`, events: ['client.created'] });
      expect(created.status).to.equal(201);
      const rotated = await call(server, 'POST', `/webhooks/${created.body.id}/rotate-secret`);
      expect(rotated.status).to.equal(200);
      const secrets = [created.body.secret as string, rotated.body.secret as string];
      const dump = JSON.stringify(await db('webhook_subscriptions').select('*'));
      for (const secret of secrets) {
        expect(dump).not.to.include(secret);
        expect(dump).not.to.include(secret.slice('whsec_'.length, 'whsec_'.length + 16));
      }
      const row = (await db('webhook_subscriptions').first('secret', 'previous_secret').where({ id: created.body.id })) as Json;
      expect(row.secret).to.match(new RegExp(`^enc:v1:${idOf(k1)}:[A-Za-z0-9_-]+$`));
      expect(row.previous_secret).to.match(new RegExp(`^enc:v1:${idOf(k1)}:`));
      // Both still sign, each verifying on its own (the rotation's grace period).
      await deliveredWith(server, '/dump', secrets[1]!, 'signed with the new secret');
      await deliveredWith(server, '/dump', secrets[0]!, 'and with the old one');
      // A secret sealed for one row does not open on another: moved, it is refused.
      const ring = createKeyring([decodeKey(k1)!]);
      expect(ring.open(row.secret, created.body.id)).to.equal(secrets[1]);
      expect(() => ring.open(row.secret, 'wh_other')).to.throw(/does not open/);
    } finally {
      expect(await server.stop()).to.equal(0);
    }
  });

  it('keeps deliveries verifying through a key rotation and a re-encryption, then runs on the new key alone', async () => {
    let server = await startServer({ ...base(), SECRET_KEYS: k1 });
    let hook: Json;
    // A receiver behind a password: the URL's password is sealed too, and must follow the keys.
    const [scheme, rest] = receiver.url.split('://') as [string, string];
    let guarded: Json;
    const basic = `Basic ${Buffer.from('hook:pa55').toString('base64')}`;
    try {
      hook = (await call(server, 'POST', '/webhooks', { url: `${receiver.url}/rotation`, events: ['client.created'] })).body;
      guarded = (await call(server, 'POST', '/webhooks', { url: `${scheme}://hook:pa55@${rest}/guarded`, events: ['client.created'] })).body;
      receiver.secrets.set('/guarded', [guarded.secret]);
      await deliveredWith(server, '/rotation', hook.secret, 'under the first key');
      await deliveredWith(server, '/guarded', guarded.secret, 'behind a password, under the first key');
      expect(receiver.received.filter((r) => r.path === '/guarded').at(-1)?.headers.authorization).to.equal(basic);
    } finally {
      expect(await server.stop()).to.equal(0);
    }

    // A new key first, the old one after it: old rows still open, new ones are sealed under the new key.
    server = await startServer({ ...base(), SECRET_KEYS: `${k2},${k1}` });
    try {
      await deliveredWith(server, '/rotation', hook.secret, 'with both keys listed');
      const fresh = (await call(server, 'POST', '/webhooks', { url: `${receiver.url}/fresh`, events: ['deal.created'] })).body;
      expect(((await db('webhook_subscriptions').first('secret').where({ id: fresh.id })) as Json).secret).to.match(new RegExp(`^enc:v1:${idOf(k2)}:`));
    } finally {
      expect(await server.stop()).to.equal(0);
    }

    const reencrypted = await admin(['secrets', 're-encrypt', '--json'], { ...storage.env, SECRET_KEYS: `${k2},${k1}` });
    expect(reencrypted.code, reencrypted.stderr).to.equal(0);
    expect(JSON.parse(reencrypted.stdout)).to.deep.equal({ reencrypted: 3, key: idOf(k2) });
    const stored = (await db('webhook_subscriptions').select('secret', 'previous_secret', 'url_password')) as Json[];
    expect(stored.filter((r) => r.url_password)).to.have.length(1);
    for (const value of stored.flatMap((r) => [r.secret, r.previous_secret, r.url_password]).filter(Boolean)) expect(value).to.match(new RegExp(`^enc:v1:${idOf(k2)}:`));
    const again = await admin(['secrets', 're-encrypt', '--json'], { ...storage.env, SECRET_KEYS: `${k2},${k1}` });
    expect(JSON.parse(again.stdout)).to.deep.equal({ reencrypted: 0, key: idOf(k2) });

    server = await startServer({ ...base(), SECRET_KEYS: k2 });
    try {
      await deliveredWith(server, '/rotation', hook.secret, 'on the new key alone');
      await deliveredWith(server, '/guarded', guarded!.secret, 'behind a password, on the new key alone');
      expect(receiver.received.filter((r) => r.path === '/guarded').at(-1)?.headers.authorization).to.equal(basic);
    } finally {
      expect(await server.stop()).to.equal(0);
    }
  });

  it('refuses to start, in one line, with a key that does not open the stored secrets; nothing is changed', async () => {
    const before = JSON.stringify(await db('webhook_subscriptions').select('*').orderBy('id'));
    for (const script of ['src/server.ts', 'src/worker.ts', 'src/cli/migrate.ts']) {
      const result = await run(script, [], { ...base(), SECRET_KEYS: k3, LOG_LEVEL: 'silent' });
      expect(result.code, script).to.equal(1);
      const lines = result.stderr.trim().split('\n');
      expect(lines, script).to.have.length(1);
      expect(lines[0]).to.include(`sealed under key ${idOf(k2)}, which SECRET_KEYS does not hold`);
    }
    expect(JSON.stringify(await db('webhook_subscriptions').select('*').orderBy('id'))).to.equal(before);
  });

  it('refuses a malformed SECRET_KEYS in one line', async () => {
    const result = await run('src/server.ts', [], { ...base(), SECRET_KEYS: `${k2},not-a-key` });
    expect(result.code).to.equal(1);
    expect(result.stderr.trim()).to.equal('Configuration error: SECRET_KEYS: must be a comma-separated list of base64 32-byte keys, newest first (as `openssl rand -base64 32` prints); key 2 is not one');
  });

  it('seals secrets stored in clear when migrating, and its down migration opens them again', async () => {
    const ring = createKeyring([decodeKey(k2)!]);
    const [row] = (await db('webhook_subscriptions').select('id', 'secret').orderBy('id').limit(1)) as Json[];
    const plain = ring.open(row!.secret, row!.id);
    await db('webhook_subscriptions').update({ secret: plain, previous_secret: null }).where({ id: row!.id });
    await sealMigration(db.withUserParams({ keyring: ring }));
    const sealed = ((await db('webhook_subscriptions').first('secret').where({ id: row!.id })) as Json).secret as string;
    expect(sealed).to.match(/^enc:v1:/);
    expect(ring.open(sealed, row!.id)).to.equal(plain);
    await unsealMigration(db.withUserParams({ keyring: ring }));
    expect(((await db('webhook_subscriptions').first('secret').where({ id: row!.id })) as Json).secret).to.equal(plain);
    await sealMigration(db.withUserParams({ keyring: ring }));
    expect(await db('webhook_subscriptions').whereNot('secret', 'like', 'enc:%').whereNot('secret', '').count({ n: '*' }).first()).to.deep.include({ n: 0 });
  });

  it('moves credentials kept in a URL before they were sealed (an https password, a NATS token) to url_password, sealed; down puts them back', async () => {
    const ring = createKeyring([decodeKey(k2)!]);
    const rows = (await db('webhook_subscriptions').select('id', 'url', 'url_password').orderBy('id')) as Json[];
    const [https, nats, amqp] = rows as [Json, Json, Json];
    const before: Record<string, string> = { [https.id]: 'https://hook:p%40ss@example.com/h', [nats.id]: 'nats://t0ken@nats.example.com:4222/a.b', [amqp.id]: 'amqp://guest@broker.example.com:5672/ex' };
    for (const [id, url] of Object.entries(before)) await db('webhook_subscriptions').update({ url, url_password: null }).where({ id });
    const amqpPassword = ring.seal('kept apart', amqp.id);
    await db('webhook_subscriptions').update({ url_password: amqpPassword }).where({ id: amqp.id });
    const stored = async (id: string) => (await db('webhook_subscriptions').first('url', 'url_password').where({ id })) as Json;

    await sealUrls(db.withUserParams({ keyring: ring }));
    expect((await stored(https.id)).url).to.equal('https://hook@example.com/h');
    expect(ring.open((await stored(https.id)).url_password, https.id)).to.equal('p@ss');
    expect((await stored(nats.id)).url).to.equal('nats://nats.example.com:4222/a.b');
    expect(ring.open((await stored(nats.id)).url_password, nats.id)).to.equal('t0ken');
    expect(await stored(amqp.id)).to.deep.equal({ url: before[amqp.id], url_password: amqpPassword });
    // Run again, it changes nothing.
    const once = JSON.stringify(await db('webhook_subscriptions').select('*').orderBy('id'));
    await sealUrls(db.withUserParams({ keyring: ring }));
    expect(JSON.stringify(await db('webhook_subscriptions').select('*').orderBy('id'))).to.equal(once);

    await unsealUrls(db.withUserParams({ keyring: ring }));
    expect(await stored(https.id)).to.deep.equal({ url: 'https://hook:p%40ss@example.com/h', url_password: null });
    expect(await stored(nats.id)).to.deep.equal({ url: before[nats.id], url_password: null });
    expect(await stored(amqp.id)).to.deep.equal({ url: before[amqp.id], url_password: amqpPassword });
    for (const row of rows) await db('webhook_subscriptions').update({ url: row.url, url_password: row.url_password }).where({ id: row.id });
  });

  describe('without SECRET_KEYS', () => {
    it('on the embedded default, makes a key file of mode 0600 beside the database once, and keeps using it', async function () {
      if (backend().kind !== 'embedded') this.skip();
      const own = await isolatedDatabase('keyfile');
      try {
        const dir = path.dirname(own.env.DATABASE_URL!.slice('sqlite:'.length));
        const file = path.join(dir, 'secret.key');
        expect(fs.existsSync(file)).to.equal(false);
        let server = await startServer({ ...own.env, DEMO: 'false' });
        expect(await server.stop()).to.equal(0);
        expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
        const key = fs.readFileSync(file, 'utf8');
        expect(decodeKey(key)).to.have.length(32);
        server = await startServer({ ...own.env, DEMO: 'false' });
        expect(await server.stop()).to.equal(0);
        expect(fs.readFileSync(file, 'utf8')).to.equal(key);
      } finally {
        await own.drop();
      }
    });

    it('on a database server, refuses to start in one line saying how to make a key', async function () {
      if (backend().kind === 'embedded') this.skip();
      const result = await run('src/server.ts', [], { ...base(), SECRET_KEYS: '' });
      expect(result.code).to.equal(1);
      const server = backend().kind === 'mysql' ? 'MySQL' : 'PostgreSQL';
      expect(result.stderr.trim()).to.match(new RegExp(`^Configuration error: SECRET_KEYS: is required with a ${server} DATABASE_URL: .*openssl rand -base64 32`));
      expect(result.stderr.trim().split('\n')).to.have.length(1);
    });
  });
});
