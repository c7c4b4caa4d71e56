import { hash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'wsk_';
/** wsk_ + 43 characters of base64url (32 random bytes). */
const TOKEN_SHAPE = /^wsk_[A-Za-z0-9_-]{43,128}$/;

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function looksLikeToken(token: string): boolean {
  return TOKEN_SHAPE.test(token);
}

/** Tokens carry 256 random bits, so one fast hash is enough: nothing to brute-force. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** What lists and logs may show of a key: enough to recognise it, never enough to use it. */
export function displayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 8);
}
