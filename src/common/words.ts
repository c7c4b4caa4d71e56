/** `an invoice`, `a deal`: the article by the name's first letter, as the documents write it. */
export const a = (name: string) => `${/^[aeiou]/i.test(name) ? 'an' : 'a'} ${name}`;

/** `An invoice`, `A deal`: the same, to begin a sentence. */
export const A = (name: string) => {
  const phrase = a(name);
  return phrase.charAt(0).toUpperCase() + phrase.slice(1);
};

/** `1 delivery`, `3 deliveries`. */
export const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** `a`, `a and b`, `a, b and c` (or `a, b or c`): items as a sentence lists them. */
export const inWords = (items: readonly string[], conjunction: 'and' | 'or' = 'and') => (items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} ${conjunction} ${items[items.length - 1]}`);

/** The edits (insert, delete, replace, swap two neighbours) from one word to another. */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known word a mistyped one most likely meant (`validat` -> `validate`, `beforewrite` ->
 * `beforeWrite`), or undefined when none is near: at most a third of its letters off.
 */
export function nearest(word: string, known: readonly string[]): string | undefined {
  let best: { word: string; edits: number } | undefined;
  for (const candidate of known) {
    const edits = distance(word.toLowerCase(), candidate.toLowerCase());
    if (edits <= Math.max(1, Math.floor(candidate.length / 3)) && (!best || edits < best.edits)) best = { word: candidate, edits };
  }
  return best?.word;
}

/** `"validat" is not a key it knows: did you mean "validate"?`, or the keys it knows. */
export function unknownKey(key: string, known: readonly string[], noun = 'key'): string {
  const guess = nearest(key, known);
  return `"${key}" is not ${a(noun)} it knows: ${guess ? `did you mean "${guess}"?` : `it knows ${inWords(known.map((k) => `"${k}"`), 'and')}`}`;
}

/** The first key of `value` that `known` does not hold, said as unknownKey() says it; undefined when every key is known (or `value` is no object). */
export function unknownKeyOf(value: unknown, known: Readonly<Record<string, true>>, noun = 'key'): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const key = Object.keys(value).find((k) => !(k in known));
  return key === undefined ? undefined : unknownKey(key, Object.keys(known), noun);
}
