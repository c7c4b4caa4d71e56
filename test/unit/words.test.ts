import { expect } from 'chai';
import { nearest, unknownKey } from '../../src/common/words.js';

describe('the nearest known word to a mistyped one', () => {
  const KEYS = ['name', 'path', 'table', 'fields', 'required', 'references', 'validate', 'beforeWrite', 'handlers', 'actions'];

  it('finds a word one or two edits off, letter case, swapped letters and missing letters included', () => {
    expect(nearest('validat', KEYS)).to.equal('validate');
    expect(nearest('beforewrite', KEYS)).to.equal('beforeWrite');
    expect(nearest('refrences', KEYS)).to.equal('references');
    expect(nearest('hadnlers', KEYS)).to.equal('handlers');
    expect(nearest('feilds', KEYS)).to.equal('fields');
  });

  it('guesses nothing where no word is near, rather than a wrong one', () => {
    expect(nearest('colour', KEYS)).to.equal(undefined);
    expect(nearest('x', KEYS)).to.equal(undefined);
    expect(nearest('', KEYS)).to.equal(undefined);
  });

  it('says the guess, or else the words it knows', () => {
    expect(unknownKey('validat', KEYS)).to.equal('"validat" is not a key it knows: did you mean "validate"?');
    expect(unknownKey('colour', ['a', 'b'], 'option')).to.equal('"colour" is not an option it knows: it knows "a" and "b"');
  });
});
