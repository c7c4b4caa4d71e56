import { expect } from 'chai';
import { generatePassword, hashPassword, verifyPassword } from '../../src/admin/passwords.js';

describe('passwords', () => {
  it('hashes with scrypt and a random salt, verifies the right password only, and never stores it', async () => {
    const password = generatePassword();
    expect(password).to.match(/^[A-Za-z0-9_-]{20}$/);
    const [a, b] = [await hashPassword(password), await hashPassword(password)];
    expect(a).to.match(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.to.equal(b, 'a new salt each time');
    expect(a).not.to.contain(password);
    expect(await verifyPassword(password, a)).to.equal(true);
    expect(await verifyPassword(password, b)).to.equal(true);
    expect(await verifyPassword(`${password}x`, a)).to.equal(false);
    expect(await verifyPassword('', a)).to.equal(false);
  });

  it('matches nothing against a malformed stored hash', async () => {
    for (const stored of ['', 'plain', 'scrypt$1$2$3$$', 'bcrypt$2b$10$abc']) expect(await verifyPassword('x', stored)).to.equal(false);
  });
});
