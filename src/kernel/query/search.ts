import { ApiError } from '../../common/errors.js';
import type { FieldKind, JsonSchema, Resource, Row } from '../model/index.js';

/**
 * Search (docs/reference.md section 14): `q=<words>` finds the objects where every word is the start of a
 * word of their searchable fields (those whose kind says so: email, and text declared
 * `searchable`), whatever the case and accents. The words of each object are kept in one
 * table of the kernel's, `search_terms` (workspace, resource, term, object), written in the
 * transaction that writes the object (kernel/storage/store.ts): an inverted index on a B-tree, which
 * both databases seek by prefix, with the same words, lengths and no stopwords on each.
 */

/**
 * The version of wordsOf(): a change to how words are made changes it, and the server then makes
 * every object's terms again at start-up (kernel/storage/search-index.ts), since terms are deleted by
 * making them again from the object.
 */
export const WORDS_VERSION = 1;

/** A term is cut to this many characters (its column's length); a longer query word is cut the same way. */
export const TERM_LENGTH = 64;
/** The most words one `q` may hold. */
export const MAX_SEARCH_WORDS = 8;
/** The longest `q`. */
export const MAX_SEARCH_LENGTH = 200;

const WORD = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}+/gu;

/**
 * The words of a text as the index keeps them: runs of letters and digits, lower-cased, accents
 * taken off (`Müller-Lüdenscheidt` -> `muller`, `ludenscheidt`), each cut to TERM_LENGTH.
 */
export function wordsOf(text: string): string[] {
  const folded = text.normalize('NFKD').replace(MARKS, '').toLowerCase();
  return (folded.match(WORD) ?? []).map((word) => [...word].slice(0, TERM_LENGTH).join(''));
}

/** The fields `q` searches, from their kinds. */
export function searchableFields(def: Resource, kinds: Readonly<Record<string, FieldKind>>): string[] {
  return Object.keys(def.fields).filter((field) => kinds[field]?.searchable === true);
}

/** The list's `q` parameter, for a resource with something to search. */
export function searchParameter(fields: readonly string[]): Record<string, JsonSchema> {
  if (fields.length === 0) return {};
  return {
    q: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_SEARCH_LENGTH,
      description: `Words to find in ${fields.join(', ')}: every word must start a word of one of them (case and accents do not matter; up to ${MAX_SEARCH_WORDS} words). Keeps the list's order and cursors, and combines with filters.`,
      examples: ['acme'],
    },
  };
}

/** The distinct terms of a stored row: what the index holds for it. */
export function termsOf(fields: readonly string[], row: Row): Set<string> {
  const terms = new Set<string>();
  for (const field of fields) {
    const value = row[field];
    if (typeof value === 'string') for (const word of wordsOf(value)) terms.add(word);
  }
  return terms;
}

/** Whether every word starts one of `terms` (a row's, termsOf): what the index answers, asked of the row itself. */
export function hasEveryWord(terms: ReadonlySet<string>, words: readonly string[]): boolean {
  return words.every((word) => {
    for (const term of terms) if (term.startsWith(word)) return true;
    return false;
  });
}

/** Whether two rows have the same terms (an update that leaves them alone does not touch the index). */
export function sameTerms(fields: readonly string[], a: Row, b: Row): boolean {
  return fields.every((field) => a[field] === b[field]);
}

/** The distinct words of `q`, checked: 400 naming `q` when it has none, or too many. */
export function searchWords(q: unknown): string[] {
  const words = [...new Set(wordsOf(String(q)))];
  const refuse = (message: string) => new ApiError('invalid_parameter', 'Invalid query parameter: q.', { errors: [{ parameter: 'q', message }] });
  if (words.length === 0) throw refuse('has no word to search for (letters or digits)');
  if (words.length > MAX_SEARCH_WORDS) throw refuse(`has ${words.length} words; a search takes at most ${MAX_SEARCH_WORDS}`);
  // A longer word's prefix finds the same objects as it would: one that starts with it.
  return words.filter((word) => !words.some((other) => other !== word && other.startsWith(word)));
}
