import { expect } from 'chai';
import { hasEveryWord, searchWords, sameTerms, termsOf, TERM_LENGTH, wordsOf } from '../../src/kernel/query/search.js';
import { ApiError } from '../../src/common/errors.js';

describe('search words (kernel/query/search.ts)', () => {
  it('splits on anything but letters and digits, lower-cases and takes accents off', () => {
    expect(wordsOf('Jörg Müller-Lüdenscheidt')).to.deep.equal(['jorg', 'muller', 'ludenscheidt']);
    expect(wordsOf('grace.hopper@navy.example')).to.deep.equal(['grace', 'hopper', 'navy', 'example']);
    expect(wordsOf('INV-2026-0042')).to.deep.equal(['inv', '2026', '0042']);
    expect(wordsOf('Ｆｕｌｌ ＷＩＤＴＨ Ç')).to.deep.equal(['full', 'width', 'c']);
    expect(wordsOf('東京 オフィス')).to.deep.equal(['東京', 'オフィス']);
    expect(wordsOf(' -- ... ')).to.deep.equal([]);
  });

  it('cuts a long word to the length of a term, counting characters, not UTF-16 units', () => {
    const long = '𝒜'.repeat(TERM_LENGTH + 10);
    const [word] = wordsOf(long);
    expect([...(word ?? '')]).to.have.length(TERM_LENGTH);
  });

  it('keeps each distinct term of the searchable fields once, and nothing of the others', () => {
    const terms = termsOf(['name', 'company'], { name: 'Acme Acme', company: 'ACME Berlin', phone: '030 1234', email: null });
    expect([...terms].sort()).to.deep.equal(['acme', 'berlin']);
    expect(sameTerms(['name'], { name: 'a', phone: '1' }, { name: 'a', phone: '2' })).to.equal(true);
    expect(sameTerms(['name'], { name: 'a' }, { name: 'b' })).to.equal(false);
  });

  it('reads q as distinct words, drops one that another starts with, and refuses none or more than 8', () => {
    expect(searchWords('Ac acme ACME Berlin')).to.deep.equal(['acme', 'berlin']);
    expect(() => searchWords('..')).to.throw(ApiError, 'q');
    try {
      searchWords('a b c d e f g h i');
      expect.fail('nine words');
    } catch (err) {
      expect((err as ApiError).code).to.equal('invalid_parameter');
    }
  });

  it("tells whether every word starts a term of a row, as the index would (a walked row's check)", () => {
    const terms = termsOf(['name', 'email'], { name: 'Müller-Lüdenscheidt GmbH', email: 'jo@acme.example' });
    expect(hasEveryWord(terms, searchWords('lud mul'))).to.equal(true);
    expect(hasEveryWord(terms, searchWords('ACME jo'))).to.equal(true);
    expect(hasEveryWord(terms, searchWords('acme berlin'))).to.equal(false, 'a word of none');
    expect(hasEveryWord(terms, searchWords('denscheidt'))).to.equal(false, 'inside a word, not at its start');
    expect(hasEveryWord(new Set(), searchWords('x'))).to.equal(false);
  });
});
