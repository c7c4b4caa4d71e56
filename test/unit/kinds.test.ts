import { expect } from 'chai';
import fc from 'fast-check';
import { kindOf, SAFE_INTEGER, storable, type FieldKind } from '../../src/kernel/model/kinds.js';
import { checkMoney, moneyPairs } from '../../src/kernel/model/money.js';
import type { ApiError } from '../../src/common/errors.js';
import { boolean, datetime, email, integer, money, moment, ref, required, states, text } from '../../src/kernel/model/fields.js';
import { KIND_CASES } from '../helpers/kinds.js';
import { textType } from '../../src/db/tables.js';
import { fits } from '../../src/kernel/storage/table-plan.js';

/** How each database hands a stored value back: MySQL may give a BIGINT as a string; both give booleans as 0 or 1. */
const AS_READ = {
  sqlite: (v: unknown) => (typeof v === 'boolean' ? Number(v) : v),
  mysql: (v: unknown) => (typeof v === 'boolean' ? Number(v) : typeof v === 'number' && Math.abs(v) > 2 ** 31 - 1 ? String(v) : v),
};

describe('field kinds: codecs (property-based)', () => {
  for (const { name, kind, values } of KIND_CASES) {
    for (const [dialect, asRead] of Object.entries(AS_READ)) {
      it(`${name}: what a client sends reads back as it should, stored as ${dialect} hands it back`, () => {
        fc.assert(
          fc.property(values, ([sent, expected]) => {
            expect(kind.decode(asRead(kind.encode(sent)))).to.deep.equal(expected);
          }),
          { numRuns: 200 },
        );
      });
    }
  }

  it('a datetime is stored as epoch milliseconds, whatever the offset it came in', () => {
    const kind = kindOf(datetime('x'))!;
    expect(kind.encode('2026-12-31T10:30:00+01:00')).to.equal(Date.UTC(2026, 11, 31, 9, 30));
    expect(kind.encode('2026-12-31T09:30:00.5Z')).to.equal(Date.UTC(2026, 11, 31, 9, 30, 0, 500));
    expect(() => kind.encode('tomorrow')).to.throw(RangeError);
  });
});

describe('field kinds: each helper marks its kind, and a plain schema gets the one it fits', () => {
  it('marks the helpers, keeping their other marks (required, reference)', () => {
    expect(kindOf(text(200))?.column).to.deep.equal({ type: 'string', length: 200, nullable: true });
    expect(kindOf(text(5000, { required: true }))?.column).to.deep.equal({ type: 'text', length: 5000, nullable: false });
    // MySQL's TEXT holds 16,383 characters of any kind; past that (or with no bound) the column is MEDIUMTEXT.
    expect(textType(kindOf(text(16_383))!.column)).to.equal('text');
    expect(textType(kindOf(text(16_384))!.column)).to.equal('mediumtext');
    expect(textType(kindOf({ type: 'string' })!.column)).to.equal('mediumtext');
    expect(kindOf(required(text(10)))?.name).to.equal('text');
    expect(kindOf(email())?.name).to.equal('email');
    expect(kindOf(integer({ min: 0, max: 100 }))?.column.type).to.equal('integer');
    expect(kindOf(integer())?.column.type).to.equal('bigInteger');
    expect(kindOf(money().amount)?.name).to.equal('money');
    expect(kindOf(money().currency)?.name).to.equal('currency');
    expect(kindOf(boolean({ default: false }))?.column).to.deep.equal({ type: 'boolean', nullable: false });
    expect(kindOf(datetime('x'))?.name).to.equal('datetime');
    expect(kindOf(moment('x'))?.name).to.equal('moment');
    expect(kindOf(states(['a', 'b'], 'a', 'x'))?.column).to.deep.equal({ type: 'string', length: 16, nullable: false });
    expect(kindOf(ref('client', 'x'))?.expandable).to.equal(true);
  });

  it('offers the operators and flags section 14 builds on', () => {
    expect(kindOf(money().amount)?.operators).to.include.members(['gt', 'gte', 'lt', 'lte']);
    expect(kindOf(datetime('x'))?.operators).to.include('gte');
    expect(kindOf(states(['a'], 'a', 'x'))?.operators).to.deep.equal(['eq', 'in']);
    expect(kindOf(text(50, { searchable: true }))?.searchable).to.equal(true);
    expect(kindOf(text(50))?.searchable).to.equal(false);
  });

  it('fits plain schemas, and none to what no kind stores', () => {
    expect(kindOf({ type: ['string', 'null'], pattern: '^[0-9]+$' })?.column).to.deep.equal({ type: 'text', nullable: true });
    expect(kindOf({ type: ['integer', 'null'], minimum: 0, maximum: 100 })?.column.type).to.equal('integer');
    expect(kindOf({ type: 'boolean', default: false })?.name).to.equal('boolean');
    expect(kindOf({ type: 'string', format: 'date-time' })?.name).to.equal('datetime');
    expect(kindOf({ type: 'string', enum: ['x', 'y'] })?.name).to.equal('states');
    expect(kindOf({ type: 'object' })).to.equal(undefined);
    expect(kindOf({ type: 'number' })).to.equal(undefined);
    expect(kindOf({ type: ['string', 'integer'] })).to.equal(undefined);
  });
});

describe('field kinds: what a body may send to an integer that declares no bounds', () => {
  it('is what JSON carries exactly, the kind and the bounds it declares kept', () => {
    const open = storable(integer());
    expect(open).to.include({ minimum: -SAFE_INTEGER, maximum: SAFE_INTEGER });
    expect(kindOf(open)?.column.type).to.equal('bigInteger');
    expect(storable(integer({ min: 0 }))).to.include({ minimum: 0, maximum: SAFE_INTEGER });
    const bounded = integer({ min: 0, max: 100 });
    expect(storable(bounded)).to.equal(bounded);
    expect(storable({ type: 'integer' })).to.deep.equal({ type: 'integer', minimum: -SAFE_INTEGER, maximum: SAFE_INTEGER });
    const words = text(10);
    expect(storable(words)).to.equal(words);
  });
});

describe('field kinds: a column holds every value of its kind, or boot says so', () => {
  const info = (type: string, maxLength: number | null) => ({ type, maxLength, nullable: true, defaultValue: null }) as never;
  it('a text past what MySQL\'s TEXT holds needs MEDIUMTEXT there; PostgreSQL\'s and SQLite\'s text hold any', () => {
    const long = kindOf(text(100_000))!.column;
    const short = kindOf(text(5000))!.column;
    const unbounded = kindOf({ type: 'string' })!.column;
    // MySQL says how many bytes a text column holds.
    expect(fits(info('text', 65_535), short)).to.equal(true);
    expect(fits(info('text', 65_535), long)).to.equal(false);
    expect(fits(info('text', 65_535), unbounded)).to.equal(false);
    expect(fits(info('mediumtext', 16_777_215), long)).to.equal(true);
    expect(fits(info('mediumtext', 16_777_215), unbounded)).to.equal(true);
    expect(fits(info('text', null), unbounded)).to.equal(true);
    expect(fits(info('varchar', 255), long)).to.equal(false);
  });

  it('a varchar at least as long as a text field holds it, whatever the column is called', () => {
    const text300 = kindOf(text(300))!.column;
    expect(fits(info('varchar', 300), text300)).to.equal(true);
    expect(fits(info('character varying', 1000), text300)).to.equal(true);
    expect(fits(info('varchar', 299), text300)).to.equal(false);
    // Without a declared bound a text may be as long as a body: no varchar holds it.
    expect(fits(info('varchar', 65_000), kindOf({ type: 'string' })!.column)).to.equal(false);
    // And a text column holds a text(200) field, whose kind asks for a varchar.
    expect(fits(info('text', null), kindOf(text(200))!.column)).to.equal(true);
  });
});

describe('field kinds: money keeps an amount with its currency', () => {
  const pairs = moneyPairs({ title: kindOf(text(200)) as FieldKind, ...Object.fromEntries(Object.entries(money()).map(([f, s]) => [f, kindOf(s) as FieldKind])) });
  const refusal = (body: Record<string, unknown>, before?: Record<string, unknown>) => {
    try {
      checkMoney(pairs, body, before);
      return undefined;
    } catch (error) {
      return (error as ApiError).extras.errors?.[0];
    }
  };

  it('pairs the money field with the one currency field', () => {
    expect(pairs).to.deep.equal([{ amount: 'amount', currency: 'currency' }]);
    expect(moneyPairs({ amount: kindOf(money().amount) as FieldKind })).to.deep.equal([]);
  });

  it('refuses an amount left without a currency, on create and on change', () => {
    expect(refusal({ amount: 1 })?.pointer).to.equal('/currency');
    expect(refusal({ amount: 1, currency: null })?.message).to.match(/^cannot be null while amount is 1/);
    expect(refusal({ amount: 0 }, { amount: null, currency: null })?.message).to.match(/^is required when amount is set/);
    expect(refusal({ currency: null }, { amount: 5, currency: 'EUR' })?.pointer).to.equal('/currency');
  });

  it('lets through an amount with its currency, no amount, and a change that leaves both alone', () => {
    expect(refusal({ amount: 1, currency: 'EUR' })).to.equal(undefined);
    expect(refusal({ amount: null })).to.equal(undefined);
    expect(refusal({ title: 'x' })).to.equal(undefined);
    expect(refusal({ amount: 2 }, { amount: 1, currency: 'EUR' })).to.equal(undefined);
    expect(refusal({ title: 'x' }, { amount: 1, currency: null })).to.equal(undefined);
    expect(refusal({ amount: null, currency: null }, { amount: 1, currency: 'EUR' })).to.equal(undefined);
  });
});
