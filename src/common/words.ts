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
