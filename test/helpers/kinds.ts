import fc from 'fast-check';
import { kinds, type FieldKind } from '../../src/kernel/model/kinds.js';

/** Every kind, with values a client may send for it and the value it must read back for each. */
export interface KindCase {
  name: string;
  kind: FieldKind;
  /** [as sent, as read back] */
  values: fc.Arbitrary<[unknown, unknown]>;
}

const same = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<[unknown, unknown]> => a.map((v) => [v, v]);
const nullable = (a: fc.Arbitrary<[unknown, unknown]>) => fc.oneof(a, fc.constant<[unknown, unknown]>([null, null]));
const MAX_MS = 253_402_300_799_999;
/** An RFC 3339 time in any offset, and the UTC form with milliseconds it reads back as. */
// Up to 14 hours before the end of year 9999, so that its local time, in any offset, is still a four-digit year.
const moment = fc.tuple(fc.integer({ min: 0, max: MAX_MS - 14 * 3_600_000 }), fc.integer({ min: -14 * 60, max: 14 * 60 })).map(([ms, offset]): [unknown, unknown] => {
  const local = new Date(ms + offset * 60_000).toISOString().slice(0, -1);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return [`${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`, new Date(ms).toISOString()];
});

export const KIND_CASES: KindCase[] = [
  { name: 'text', kind: kinds.text(200, true), values: nullable(same(fc.string({ maxLength: 200, unit: 'grapheme' }))) },
  { name: 'long text', kind: kinds.text(5000, false), values: same(fc.string({ minLength: 1, maxLength: 5000, unit: 'grapheme' })) },
  { name: 'email', kind: kinds.email(), values: nullable(same(fc.emailAddress().filter((e) => e.length <= 254))) },
  { name: 'integer', kind: kinds.integer(true, -(2 ** 31), 2 ** 31 - 1), values: nullable(same(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }))) },
  { name: 'wide integer', kind: kinds.integer(false, undefined, undefined), values: same(fc.maxSafeInteger()) },
  { name: 'money', kind: kinds.money(), values: nullable(same(fc.integer({ min: 0, max: 1e15 }))) },
  { name: 'currency', kind: kinds.currency(), values: nullable(same(fc.constantFrom('EUR', 'USD', 'JPY', 'CHF'))) },
  { name: 'boolean', kind: kinds.boolean(true), values: nullable(same(fc.boolean())) },
  { name: 'date', kind: kinds.date(), values: nullable(same(fc.date({ min: new Date(0), max: new Date(MAX_MS), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)))) },
  { name: 'datetime', kind: kinds.datetime(), values: nullable(moment) },
  { name: 'moment', kind: kinds.moment(), values: nullable(moment) },
  { name: 'states', kind: kinds.states(['draft', 'open', 'a-state-of-twenty-ch']), values: same(fc.constantFrom('draft', 'open', 'a-state-of-twenty-ch')) },
  { name: 'ref', kind: kinds.ref(), values: nullable(same(fc.stringMatching(/^deal_[0-9a-z]{1,59}$/))) },
];
