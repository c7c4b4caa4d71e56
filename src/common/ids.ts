import { randomFillSync } from 'node:crypto';

/** Random bytes drawn 4 KiB at a time: one call to the system's generator per 256 ids. */
const pool = Buffer.alloc(4096);
let offset = pool.length;
/** The character codes of the base-36 digits, 0-9 then a-z. */
const DIGITS = Array.from('0123456789abcdefghijklmnopqrstuvwxyz', (digit) => digit.charCodeAt(0));
/** Six base-36 digits at a time: 36^6 < 2^32, so a limb's step (remainder * 2^16 + limb) stays exact in a double. */
const SIX_DIGITS = 36 ** 6;
const DIGIT_COUNT = 25;

/**
 * 16 bytes as 25 base-36 digits, most significant first: the 128-bit number held as eight
 * 16-bit limbs and divided in place by 36^6, six digits a pass (5 passes of 8 divisions, where
 * one digit a pass took 25 of them), so no BigInt is made per id.
 */
export function base36(bytes: Uint8Array): string {
  const limbs = new Array<number>(8);
  for (let i = 0; i < 8; i += 1) limbs[i] = (bytes[2 * i]! << 8) | bytes[2 * i + 1]!;
  const codes = new Array<number>(DIGIT_COUNT);
  for (let last = DIGIT_COUNT - 1; last >= 0; last -= 6) {
    let remainder = 0;
    for (let i = 0; i < 8; i += 1) {
      const value = remainder * 65536 + limbs[i]!;
      const quotient = Math.floor(value / SIX_DIGITS);
      limbs[i] = quotient;
      remainder = value - quotient * SIX_DIGITS;
    }
    for (let at = last; at > last - 6 && at >= 0; at -= 1) {
      codes[at] = DIGITS[remainder % 36]!;
      remainder = Math.floor(remainder / 36);
    }
  }
  return String.fromCharCode(...codes);
}

/** Bytes of an id that hold the time it was made: milliseconds since 1970 fit 48 bits until the year 10889. */
const TIME_BYTES = 6;

/**
 * An opaque id: prefix + 25 characters of [0-9a-z] from 128 bits, the first 48 the time in
 * milliseconds and the other 80 random (as a UUIDv7 or a ULID). Ids made later sort after
 * earlier ones, so a table's primary key and the indexes that end with the id are appended
 * to where the last row went, rather than written a page per row all over the index: a batch
 * of 100 deals dirtied about 100 pages of each such index when ids were wholly random. 80
 * random bits a millisecond cannot be guessed. The time is the system's (`now`), not the
 * service's clock that stamps `created_at`: it only places the row, and nobody reads it back
 * (under a test's manual clock the two differ). Lower case only, so MySQL's case-insensitive
 * collation and SQLite's binary one sort and compare ids alike.
 */
export function newId(prefix: string, now = Date.now()): string {
  if (offset + 16 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 16);
  offset += 16;
  bytes.writeUIntBE(now, 0, TIME_BYTES);
  return prefix + base36(bytes);
}

/** What follows an id's prefix: base-36 digits, lower case (what newId makes). */
const TAIL = '[0-9a-z]';
const ID_TAIL = new RegExp(`${TAIL}+$`, 'y');

/** The JSON Schema pattern of an id made with `prefix`. */
export const idPattern = (prefix: string): string => `^${prefix}${TAIL}+$`;

/**
 * The pattern of a parameter that takes from one up to `most` ids made with `prefix`, comma-separated,
 * each of at most 60 characters after the prefix.
 */
export const idListPattern = (prefix: string, most = 1): string => `^${prefix}${TAIL}{1,60}` + (most > 1 ? `(,${prefix}${TAIL}{1,60}){0,${most - 1}}$` : '$');

/** The schema of an id made with `prefix` (as it is in answers: a string of its pattern). */
export const idSchema = (prefix: string, extra: Record<string, unknown> = {}): { type: 'string'; pattern: string } & Record<string, unknown> => ({ type: 'string', pattern: idPattern(prefix), ...extra });

/**
 * Whether `id` has the form of an id made with `prefix` (the prefix, then lower-case base-36
 * digits, 64 characters at most), so a lookup of one that cannot exist is answered without
 * asking the database.
 */
export function isIdOf(prefix: string, id: string): boolean {
  if (id.length > 64 || !id.startsWith(prefix)) return false;
  ID_TAIL.lastIndex = prefix.length;
  return ID_TAIL.test(id);
}
