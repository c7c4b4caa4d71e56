import { randomFillSync } from 'node:crypto';

/** Random bytes drawn 4 KiB at a time: one call to the system's generator per 256 ids. */
const pool = Buffer.alloc(4096);
let offset = pool.length;
const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * 16 bytes as 25 base-36 digits, most significant first: the 128-bit number held as eight
 * 16-bit limbs and divided by 36 in place, so no BigInt is made per id.
 */
export function base36(bytes: Uint8Array): string {
  const limbs = new Array<number>(8);
  for (let i = 0; i < 8; i += 1) limbs[i] = (bytes[2 * i]! << 8) | bytes[2 * i + 1]!;
  let out = '';
  for (let digit = 0; digit < 25; digit += 1) {
    let remainder = 0;
    for (let i = 0; i < 8; i += 1) {
      const value = remainder * 65536 + limbs[i]!;
      limbs[i] = Math.floor(value / 36);
      remainder = value - limbs[i]! * 36;
    }
    out = DIGITS[remainder]! + out;
  }
  return out;
}

/**
 * An opaque id: prefix + 25 characters of [0-9a-z] from 128 random bits. Lower case only, so
 * MySQL's case-insensitive collation and SQLite's binary one sort and compare ids alike.
 */
export function newId(prefix: string): string {
  if (offset + 16 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 16);
  offset += 16;
  return prefix + base36(bytes);
}
