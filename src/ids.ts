import { randomBytes } from 'node:crypto';

/**
 * An opaque id: prefix + 25 characters of [0-9a-z] from 128 random bits. Lower case only, so
 * MySQL's case-insensitive collation and SQLite's binary one sort and compare ids alike.
 */
export function newId(prefix: string): string {
  return prefix + BigInt(`0x${randomBytes(16).toString('hex')}`).toString(36).padStart(25, '0');
}
