import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { checksum, displayPrefix, generateToken, isTestToken, malformedToken, TOKEN_PATTERN } from '../../src/auth/tokens.js';

describe('token format (auth/tokens.ts)', () => {
  it('makes tokens of the documented pattern whose last 6 characters are the CRC-32 of the rest', () => {
    for (let i = 0; i < 200; i++) {
      const token = generateToken();
      expect(token).to.match(new RegExp(`^${TOKEN_PATTERN}$`));
      expect(token).to.have.length(4 + 43 + 6);
      expect(token.slice(-6)).to.equal(checksum(token.slice(0, -6)));
      expect(malformedToken(token)).to.equal(undefined);
    }
  });

  it('makes test tokens wsk_test_ and 49 characters, checked the same way, told apart by prefix and length alone', () => {
    for (let i = 0; i < 200; i++) {
      const token = generateToken('test');
      expect(token).to.match(new RegExp(`^${TOKEN_PATTERN}$`));
      expect(token).to.match(/^wsk_test_/);
      expect(token).to.have.length(9 + 43 + 6);
      expect(malformedToken(token)).to.equal(undefined);
      expect(isTestToken(token)).to.equal(true);
      expect(displayPrefix(token)).to.equal(token.slice(0, 16));
      const live = generateToken();
      expect(isTestToken(live)).to.equal(false);
      expect(displayPrefix(live)).to.equal(live.slice(0, 12));
    }
    // A live token whose random part happens to begin with test_ stays live.
    const body = `wsk_test_${randomBytes(32).toString('base64url').slice(5)}`;
    const lookalike = body + checksum(body);
    expect(lookalike).to.have.length(4 + 43 + 6);
    expect(malformedToken(lookalike)).to.equal(undefined);
    expect(isTestToken(lookalike)).to.equal(false);
    expect(displayPrefix(lookalike)).to.equal(lookalike.slice(0, 12));
    const test = generateToken('test');
    expect(malformedToken(test.slice(0, -1))).to.match(/not a Workspace API key/);
    expect(malformedToken(`wsk_test_${test.slice(10)}`)).to.match(/not a Workspace API key/);
  });

  it('writes the checksum in six base62 digits, zero-padded', () => {
    expect(checksum('')).to.equal('000000');
    for (let i = 0; i < 100; i++) expect(checksum(randomBytes(8).toString('hex'))).to.match(/^[0-9A-Za-z]{6}$/);
  });

  it('refuses a token with one character changed, cut short, or lengthened, and says why', () => {
    const token = generateToken();
    const changed = token.slice(0, 10) + (token[10] === 'A' ? 'B' : 'A') + token.slice(11);
    expect(malformedToken(changed)).to.match(/checksum does not match/);
    const lastChanged = token.slice(0, -1) + (token.endsWith('0') ? '1' : '0');
    expect(malformedToken(lastChanged)).to.match(/checksum does not match/);
    expect(malformedToken(token.slice(0, -1))).to.match(/not a Workspace API key/);
    expect(malformedToken(`${token}x`)).to.match(/not a Workspace API key/);
    expect(malformedToken(`xsk_${token.slice(4)}`)).to.match(/not a Workspace API key/);
  });

  it('still takes a token made before the checksum: wsk_ and 43 characters of base64url', () => {
    const legacy = `wsk_${randomBytes(32).toString('base64url')}`;
    expect(legacy).to.have.length(47);
    expect(malformedToken(legacy)).to.equal(undefined);
  });
});
