import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Mode } from '../common/modes.js';

export const TOKEN_PREFIX = 'wsk_';
/** What a test key's token begins with (docs/reference.md, "Test mode"): `wsk_test_`. */
export const TEST_TOKEN_PREFIX = 'wsk_test_';

/**
 * A token: `wsk_`, 43 characters of base64url (32 random bytes), then 6 characters of base62
 * (0-9, A-Z, a-z): the CRC-32 of everything before them. A mistyped or truncated token is
 * refused by its checksum alone, with no database or Redis round trip, and a secret scanner
 * finds leaked tokens by TOKEN_PATTERN (and can check the CRC to drop false positives).
 * Tokens made before the checksum (`wsk_` and the 43 characters alone) keep working. A test
 * key's token begins `wsk_test_` instead: five characters longer than any live token, so the two
 * never look alike, to a person or to a scanner.
 */
const RANDOM_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The pattern of a token, live or test, for secret scanners (docs/consumer.md, "Keys: format, expiry"). */
export const TOKEN_PATTERN = `wsk_(?:test_)?[A-Za-z0-9_-]{${RANDOM_LENGTH}}[0-9A-Za-z]{${CHECKSUM_LENGTH}}`;
const CHECKED = new RegExp(`^${TOKEN_PATTERN}$`);
const LEGACY = new RegExp(`^wsk_[A-Za-z0-9_-]{${RANDOM_LENGTH}}$`);

/** The CRC-32 of `text` in 6 base62 digits (62^6 > 2^32), zero-padded. */
export function checksum(text: string): string {
  let n = crc32(text);
  let digits = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    digits = BASE62[n % 62] + digits;
    n = Math.floor(n / 62);
  }
  return digits;
}

export function generateToken(mode: Mode = 'live'): string {
  const body = (mode === 'test' ? TEST_TOKEN_PREFIX : TOKEN_PREFIX) + randomBytes(32).toString('base64url');
  return body + checksum(body);
}

/** Why a token cannot be one of ours, found without any I/O; undefined when it may be. */
export function malformedToken(token: string): string | undefined {
  if (LEGACY.test(token)) return undefined;
  if (!CHECKED.test(token)) return 'The token is not a Workspace API key.';
  const body = token.slice(0, -CHECKSUM_LENGTH);
  if (checksum(body) !== token.slice(-CHECKSUM_LENGTH)) return 'The token is not a Workspace API key: its checksum does not match (mistyped or cut short?).';
  return undefined;
}

/** Tokens carry 256 random bits, so one fast hash is enough: nothing to brute-force. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Whether a token is a test key's: its prefix, at a test token's length (a live token's random part may begin `test_` too). */
export const isTestToken = (token: string): boolean => token.length === TEST_TOKEN_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH && token.startsWith(TEST_TOKEN_PREFIX);

/**
 * What lists and logs may show of a key: enough to recognise it, never enough to use it. A test
 * key's shows `wsk_test_` and 7 characters (the column holds 16).
 */
export function displayPrefix(token: string): string {
  return isTestToken(token) ? token.slice(0, TEST_TOKEN_PREFIX.length + 7) : token.slice(0, TOKEN_PREFIX.length + 8);
}
