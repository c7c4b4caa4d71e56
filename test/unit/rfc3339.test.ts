import { expect } from 'chai';
import fc from 'fast-check';
import { epochMsOf } from '../../src/common/rfc3339.js';
import { createSchemaAjv } from '../../src/kernel/model/ajv.js';

const isDateTime = createSchemaAjv().compile({ type: 'string', format: 'date-time' });
/** A day inside years 0000-9999 at each end, so that the local time in any offset has four digits. */
const DAY_MS = 86_400_000;
const MAX_MS = 253_402_300_799_999 - DAY_MS;

describe('RFC 3339 times (epochMsOf), in every form the date-time format takes', () => {
  it('reads any offset, with or without its colon or minutes, any separator and any fraction, as the instant it names', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -62_167_219_200_000 + DAY_MS, max: MAX_MS }),
        fc.integer({ min: -23, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.constantFrom('T', 't', ' '),
        fc.constantFrom('colon', 'bare', 'hours'),
        fc.integer({ min: 0, max: 9 }),
        (ms, offsetHours, offsetMinutesDrawn, separator, offsetForm, digits) => {
          const offsetMinutes = offsetForm === 'hours' ? 0 : offsetMinutesDrawn;
          const offset = (offsetHours < 0 ? -1 : 1) * (Math.abs(offsetHours) * 60 + offsetMinutes);
          const local = new Date(ms + offset * 60_000).toISOString();
          const fraction = digits === 0 ? '' : `.${local.slice(20, 23)}${'7'.repeat(Math.max(0, digits - 3))}`.slice(0, digits + 1);
          const hh = String(Math.abs(offsetHours)).padStart(2, '0');
          const mm = String(offsetMinutes).padStart(2, '0');
          const zone = offset === 0 && offsetForm === 'colon' ? 'Z' : `${offsetHours < 0 || (offsetHours === 0 && offset < 0) ? '-' : '+'}${hh}${offsetForm === 'colon' ? `:${mm}` : offsetForm === 'bare' ? mm : ''}`;
          const text = `${local.slice(0, 10)}${separator}${local.slice(11, 19)}${fraction}${zone}`;
          expect(isDateTime(text), text).to.equal(true);
          // The instant, to the millisecond the fraction gives.
          const kept = digits === 0 ? 0 : Number(local.slice(20, 23).slice(0, Math.min(digits, 3)).padEnd(3, '0'));
          expect(epochMsOf(text), text).to.equal(Math.floor(ms / 1000) * 1000 + kept);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('counts a leap second as the first instant of the next minute, as PostgreSQL does', () => {
    for (const [text, expected] of [
      ['2026-12-31T23:59:60Z', '2027-01-01T00:00:00.000Z'],
      ['2026-12-31T23:59:60.250Z', '2027-01-01T00:00:00.250Z'],
      ['2027-01-01T00:59:60+01:00', '2027-01-01T00:00:00.000Z'],
      ['2026-06-30T23:59:60z', '2026-07-01T00:00:00.000Z'],
    ] as const) {
      expect(isDateTime(text), text).to.equal(true);
      expect(new Date(epochMsOf(text)).toISOString(), text).to.equal(expected);
    }
  });

  it('reads years below 100 as themselves, not as 19xx', () => {
    expect(new Date(epochMsOf('0042-03-01T12:00:00Z')).toISOString()).to.equal('0042-03-01T12:00:00.000Z');
    expect(new Date(epochMsOf('0000-01-01T00:00:00+00:30')).toISOString()).to.equal('-000001-12-31T23:30:00.000Z');
  });

  it('refuses what is not an RFC 3339 time with a RangeError', () => {
    for (const text of ['tomorrow', '2026-12-31', '2026-12-31T10:00Z', '2026-12-31T10:00:00', '2026-12-31T10:00:00+2']) {
      expect(() => epochMsOf(text), text).to.throw(RangeError);
    }
  });
});
