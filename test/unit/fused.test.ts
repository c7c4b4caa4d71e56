import { expect } from 'chai';
import { FUSABLE, FUSED_VALUES, fuse, together } from '../../src/db/fused.js';

describe('PostgreSQL INSERTs fused into one statement (unit, src/db/fused.ts)', () => {
  const deal = { sql: 'insert into "deals" ("id", "title") values ($1, $2)', values: ['deal_1', 'A'] };
  const event = { sql: 'insert into "events" ("id", "object_id") values ($1, $2)', values: ['evt_1', 'deal_1'] };
  const terms = { sql: 'insert into "search_terms" ("term", "object_id") values ($1, $2), ($3, $4) on conflict do nothing', values: ['a', 'deal_1', 'b', 'deal_1'] };

  it('joins a write\'s INSERTs in their order, each one\'s values numbered after those before it', () => {
    const [one, ...rest] = fuse([deal, terms, event]);
    expect(rest).to.deep.equal([]);
    expect(one?.sql).to.equal(
      'WITH s0 AS (insert into "deals" ("id", "title") values ($1, $2)), ' +
        's1 AS (insert into "search_terms" ("term", "object_id") values ($3, $4), ($5, $6) on conflict do nothing) ' +
        'insert into "events" ("id", "object_id") values ($7, $8)',
    );
    expect(one?.values).to.deep.equal(['deal_1', 'A', 'a', 'deal_1', 'b', 'deal_1', 'evt_1', 'deal_1']);
    // The same texts give the same text (one prepared statement per connection).
    expect(fuse([deal, terms, event])[0]?.sql).to.equal(one?.sql);
  });

  it('leaves one statement as it is, and nothing as nothing', () => {
    expect(fuse([deal])).to.deep.equal([deal]);
    expect(fuse([])).to.deep.equal([]);
  });

  it(`leaves statements as they are past ${FUSED_VALUES} values in all (a batch's INSERTs)`, () => {
    const big = { sql: 'insert into "deals" ("id") values ($1)', values: Array.from({ length: FUSED_VALUES - 7 }, (_, i) => `deal_${i}`) };
    expect(together([deal, big, event])).to.equal(true);
    expect(fuse([deal, big, event])).to.have.length(1);
    expect(together([deal, big, event, terms])).to.equal(false);
    expect(fuse([deal, big, event, terms])).to.deep.equal([deal, big, event, terms]);
  });

  it('takes INSERTs only: an UPDATE or a DELETE is sent in its turn', () => {
    expect(FUSABLE.test(deal.sql)).to.equal(true);
    expect(FUSABLE.test('INSERT INTO key_requests (key_id) VALUES ($1) ON CONFLICT DO NOTHING')).to.equal(true);
    expect(FUSABLE.test('update "deals" set "title" = $1')).to.equal(false);
    expect(FUSABLE.test('delete from "search_terms" where "term" = $1')).to.equal(false);
    expect(FUSABLE.test('select 1')).to.equal(false);
  });
});
