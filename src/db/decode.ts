/**
 * How stored values read back, whichever database holds them: both store booleans as 0 or 1,
 * and MySQL may return counts, sums and big integers as strings. The rest of the code reads
 * database values through these, and never guesses at a dialect's representation itself.
 */

/** 0/1 (or '0'/'1') as a boolean; null stays null. */
export function asBoolean(value: unknown): boolean | null {
  return value == null ? null : Number(value) !== 0;
}

/** A stored integer (a number, or a numeric string from MySQL) as a number. */
export function asNumber(value: unknown): number {
  return Number(value);
}

/** As asNumber, null staying null. */
export function asNullableNumber(value: unknown): number | null {
  return value == null ? null : Number(value);
}
