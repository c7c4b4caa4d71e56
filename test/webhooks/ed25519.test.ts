import { expect } from 'chai';
import nacl from 'tweetnacl';
import { newSecret, publicKeyOf, sign, signatureHeader } from '../../src/webhooks/signing.js';
import { startWorker, type Worker } from '../../src/webhooks/worker.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { contractOf } from '../helpers/contract.js';
import { problem } from '../helpers/problem.js';
import { startReceiver, verified, verifiedEd25519, type Receiver } from '../helpers/receiver.js';
import { fastWebhooks } from '../helpers/settings.js';

const FAST = fastWebhooks();

type Sub = { id: string; secret: string | null; signature: string; public_key: string | null };

describe('Ed25519 signing keys (webhooks/signing.ts)', () => {
  it('signs v1a with a whsk_ key, verified by tweetnacl with its whpk_ public key; HMAC secrets still sign v1', () => {
    const key = newSecret('ed25519');
    expect(key).to.match(/^whsk_[A-Za-z0-9+/]{43}=$/);
    const publicKey = publicKeyOf(key)!;
    expect(publicKey).to.match(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const signature = sign(key, 'msg_1', 1_700_000_000, '{"a":1}');
    expect(signature).to.match(/^v1a,[A-Za-z0-9+/]{86}==$/);
    const verify = (content: string, sig: string, pub: string) => nacl.sign.detached.verify(new TextEncoder().encode(content), Buffer.from(sig.slice(4), 'base64'), Buffer.from(pub.slice(5), 'base64'));
    expect(verify('msg_1.1700000000.{"a":1}', signature, publicKey)).to.equal(true);
    expect(verify('msg_1.1700000000.{"a":2}', signature, publicKey)).to.equal(false);
    expect(verify('msg_1.1700000000.{"a":1}', signature, publicKeyOf(newSecret('ed25519'))!)).to.equal(false);
    const hmac = newSecret();
    expect(publicKeyOf(hmac)).to.equal(null);
    expect(signatureHeader([key, hmac], 'msg_1', 1, 'x')).to.match(/^v1a,\S+ v1,\S+$/);
  });
});

/** docs/reference.md section 16: signature "ed25519", v1a signatures, a whpk_ public key, rotation with overlap. */
describe('ed25519 subscriptions, delivered (a worker, a real receiver)', () => {
  let app: TestApp;
  let worker: Worker;
  let receiver: Receiver;
  let token: string;
  let paths = 0;

  async function subscribe(json: Record<string, unknown>): Promise<Sub & { path: string }> {
    const path = `/signed${++paths}`;
    const res = await app.request('/v1/webhooks', { token, method: 'POST', json: { url: receiver.url + path, events: ['deal.created'], ...json } });
    expect(res.status, await res.clone().text()).to.equal(201);
    const sub = (await res.json()) as Sub;
    receiver.secrets.set(path, [sub.public_key ?? sub.secret ?? '']);
    return { ...sub, path };
  }
  const newDeal = (title: string) => app.request('/v1/deals', { token, method: 'POST', json: { title } });

  before(async () => {
    receiver = await startReceiver();
    app = await startApp({ env: FAST });
    receiver.contract = await contractOf(app.url);
    worker = startWorker(app.deps);
    ({ token } = await app.workspaceWithKey());
  });
  after(async () => {
    await worker.stop();
    await app.close();
    await receiver.close();
  });
  afterEach(() => {
    expect(receiver.rejected).to.deep.equal([]);
  });

  it('signs each delivery v1a with a key never shown (its public key is), verified with a library we did not write', async () => {
    const sub = await subscribe({ signature: 'ed25519' });
    expect(sub.signature).to.equal('ed25519');
    expect(sub.secret).to.equal(null);
    expect(sub.public_key).to.match(/^whpk_/);
    const shown = await (await app.request(`/v1/webhooks/${sub.id}`, { token })).text();
    expect(JSON.parse(shown)).to.include({ signature: 'ed25519', public_key: sub.public_key });
    expect(shown).to.not.contain('whsk_');
    // Sealed at rest like an HMAC secret.
    const row = (await app.deps.db('webhook_subscriptions').where({ id: sub.id }).first('secret')) as { secret: string };
    expect(row.secret).to.not.contain('whsk_');
    expect((await newDeal('Signed with Ed25519')).status).to.equal(201);
    const [got] = await receiver.waitFor(1, (r) => r.path === sub.path);
    expect(String(got!.headers['webhook-signature'])).to.match(/^v1a,[A-Za-z0-9+/]+=*$/);
    expect((verifiedEd25519(sub.public_key!, got!) as { type: string }).type).to.equal('deal.created');
    expect(() => verifiedEd25519(sub.public_key!, { ...got!, body: got!.body.replace('Ed25519', 'Forged!') })).to.throw(/verifies/);
    const hmac = await subscribe({});
    expect(hmac).to.include({ signature: 'hmac', public_key: null });
    expect(hmac.secret).to.match(/^whsec_/);
  });

  it('rotates the key: a new public key, and for the overlap each delivery signed by both keys', async () => {
    const sub = await subscribe({ signature: 'ed25519' });
    const res = await app.request(`/v1/webhooks/${sub.id}/rotate-secret`, { token, method: 'POST' });
    expect(res.status).to.equal(200);
    const rotated = (await res.json()) as Sub;
    expect(rotated.secret).to.equal(null);
    expect(rotated.public_key).to.match(/^whpk_/).and.not.equal(sub.public_key);
    receiver.secrets.set(sub.path, [rotated.public_key!]);
    expect((await newDeal('After the rotation')).status).to.equal(201);
    const [got] = await receiver.waitFor(1, (r) => r.path === sub.path);
    expect(String(got!.headers['webhook-signature']).split(' ')).to.have.length(2);
    verifiedEd25519(rotated.public_key!, got!);
    verifiedEd25519(sub.public_key!, got!);
    // Each key verifies one of the two signatures: the new key's comes first.
    const [newer, older] = String(got!.headers['webhook-signature']).split(' ');
    expect(() => verified(rotated.public_key!, { ...got!, headers: { ...got!.headers, 'webhook-signature': newer } })).to.not.throw();
    expect(() => verified(sub.public_key!, { ...got!, headers: { ...got!.headers, 'webhook-signature': newer } })).to.throw();
    expect(() => verified(sub.public_key!, { ...got!, headers: { ...got!.headers, 'webhook-signature': older } })).to.not.throw();
  });

  it('refuses a signature that is neither hmac nor ed25519, and any change of it after creation, naming the field', async () => {
    const bad = await problem(await app.request('/v1/webhooks', { token, method: 'POST', json: { url: `${receiver.url}/never`, events: ['*'], signature: 'rsa' } }), 422, 'validation_failed');
    expect(bad.errors?.map((e) => e.pointer)).to.deep.equal(['/signature']);
    const sub = await subscribe({});
    const change = await problem(await app.request(`/v1/webhooks/${sub.id}`, { token, method: 'PATCH', json: { signature: 'ed25519' } }), 422, 'validation_failed');
    expect(change.errors?.map((e) => e.pointer)).to.deep.equal(['/signature']);
  });
});
