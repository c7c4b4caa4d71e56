/**
 * An RFC 3339 time in every form the `date-time` format of our schemas lets through
 * (ajv-formats): `T`, `t` or a space between date and time, `Z` or `z`, an offset with or
 * without its colon or its minutes (`+02:00`, `+0200`, `+02`), any fraction, and a leap second
 * (`23:59:60`, UTC). `Date.parse` took most of them, but not `+02` nor a leap second: it
 * answered NaN, which a write turned into a 500 and a filter into an empty page.
 */
const TIME = /^(\d{4})-(\d\d)-(\d\d)[Tt\s](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:([Zz])|([+-])(\d\d)(?::?(\d\d))?)$/;

/**
 * Epoch milliseconds of an RFC 3339 time (the schema has checked it). A leap second counts as
 * the first of the next minute, as POSIX time and PostgreSQL count it; digits past the
 * millisecond are dropped. Anything else is a RangeError.
 */
export function epochMsOf(text: string): number {
  const parts = TIME.exec(text);
  if (!parts) throw new RangeError(`not an RFC 3339 time: ${text}`);
  const [, year, month, day, hours, minutes, seconds, fraction = '', zulu, sign, offsetHours = '0', offsetMinutes = '0'] = parts;
  // setUTCFullYear, as Date.UTC would read a year below 100 as 19xx; a second of 60 rolls over.
  const at = new Date(0);
  at.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  at.setUTCHours(Number(hours), Number(minutes), Number(seconds), Number(fraction.slice(0, 3).padEnd(3, '0')));
  const offset = zulu ? 0 : (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  const ms = at.getTime() - offset;
  if (Number.isNaN(ms)) throw new RangeError(`not an RFC 3339 time: ${text}`);
  return ms;
}
