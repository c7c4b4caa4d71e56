// Pure pieces of operating the service: the keyring of SECRET_KEYS and the Redis Cluster URL.
import { expect } from 'chai';
import { clusterNodes, decodeKey } from '../../src/common/config.js';
import { createKeyring, keyId, newKey, SealError } from '../../src/secrets/keyring.js';

describe('the keyring of SECRET_KEYS (AES-256-GCM)', () => {
  const [a, b] = [decodeKey(newKey())!, decodeKey(newKey())!];

  it('seals under the newest key and opens with any key of the ring, for the row it was sealed for only', () => {
    const old = createKeyring([a]);
    const sealed = old.seal('whsec_abc', 'wh_1');
    expect(sealed).to.match(new RegExp(`^enc:v1:${keyId(a)}:[A-Za-z0-9_-]+$`));
    expect(sealed).not.to.include('abc');
    expect(old.seal('whsec_abc', 'wh_1')).not.to.equal(sealed);
    const both = createKeyring([b, a]);
    expect(both.newestId).to.equal(keyId(b));
    expect(both.open(sealed, 'wh_1')).to.equal('whsec_abc');
    expect(both.keyIdOf(both.seal('x', 'wh_1'))).to.equal(keyId(b));
    expect(() => both.open(sealed, 'wh_2')).to.throw(SealError, /another row/);
    expect(() => createKeyring([b]).open(sealed, 'wh_1')).to.throw(SealError, `key ${keyId(a)}, which SECRET_KEYS does not hold`);
  });

  it('refuses an altered or truncated value and one in clear', () => {
    const ring = createKeyring([a]);
    const sealed = ring.seal('whsec_abc', 'wh_1');
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === 'A' ? 'B' : 'A') + sealed.at(-1);
    expect(() => ring.open(flipped, 'wh_1')).to.throw(SealError);
    expect(() => ring.open(sealed.slice(0, 30), 'wh_1')).to.throw(SealError, /truncated/);
    expect(() => ring.open('whsec_abc', 'wh_1')).to.throw(SealError, /not sealed/);
    expect(ring.keyIdOf('whsec_abc')).to.equal(undefined);
  });

  it('takes base64 32-byte keys only', () => {
    expect(decodeKey(newKey())).to.have.length(32);
    expect(decodeKey(` ${newKey()}\n`)).to.have.length(32);
    expect(decodeKey(Buffer.alloc(16).toString('base64'))).to.equal(undefined);
    expect(decodeKey('not a key')).to.equal(undefined);
  });
});

describe('a Redis Cluster URL', () => {
  it('names seed nodes, carrying credentials and TLS to every node', () => {
    expect(clusterNodes('redis-cluster://10.0.0.1:7000,10.0.0.2:7001')).to.deep.equal({ nodes: ['redis://10.0.0.1:7000', 'redis://10.0.0.2:7001'], tls: false });
    expect(clusterNodes('rediss-cluster://app:p%40ss@h1:7000')).to.deep.equal({ nodes: ['rediss://h1:7000'], username: 'app', password: 'p@ss', tls: true });
    expect(clusterNodes('redis://127.0.0.1:6379')).to.equal(undefined);
  });
});
