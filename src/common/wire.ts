/** Facts of the HTTP interface that the request path enforces and the documents state. */

/** The largest body read, after decoding. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** A partial update is a JSON merge patch of the object, so its media type is accepted too. */
export const JSON_TYPES = ['application/json', 'application/merge-patch+json'];

/** Content-Encoding values a body may come in (the limit counts decoded bytes). */
export const BODY_ENCODINGS = ['identity', 'gzip', 'deflate', 'br'];

/** A client's own X-Request-Id is kept if it is sane (short, printable, no separators that break logs). */
export const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/**
 * No string the service takes in holds U+0000: PostgreSQL's text cannot store it (and refused
 * it with a 500), so every backend refuses it alike, where it comes in (path, query string, body).
 */
export const NUL = '\u0000';
export const NUL_MESSAGE = 'must not contain the character U+0000 (NUL)';

/** A JSON string may escape half of a surrogate pair alone (`"\\ud800"`): no text, and every backend stored U+FFFD instead. */
const LONE_SURROGATE = /\p{Surrogate}/u;
export const LONE_SURROGATE_MESSAGE = 'must be well-formed Unicode, without half a surrogate pair (\\ud800 to \\udfff) on its own';

/** Why a string taken in cannot be stored as it was sent, or undefined when it can. */
export function textProblem(text: string): string | undefined {
  if (text.includes(NUL)) return NUL_MESSAGE;
  if (LONE_SURROGATE.test(text)) return LONE_SURROGATE_MESSAGE;
  return undefined;
}

/**
 * The strings, and the keys, of a parsed body that cannot be stored as sent (textProblem), by
 * JSON pointer (RFC 6901), in document order. Walked with a stack of its own, not by
 * recursion: JSON.parse reads a body nested 400,000 deep, which a recursive walk would not.
 */
export function textProblems(body: unknown): Array<{ pointer: string; message: string }> {
  const found: Array<{ pointer: string; message: string }> = [];
  // [value, its pointer, what is wrong with its own key]
  const pending: Array<[unknown, string, string | undefined]> = [[body, '', undefined]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, pointer, keyProblem] = next;
    const message = keyProblem ?? (typeof value === 'string' ? textProblem(value) : undefined);
    if (message !== undefined) {
      found.push({ pointer, message });
    } else if (value !== null && typeof value === 'object') {
      // Pushed last to first, so they are popped in order.
      const entries = Array.isArray(value) ? value.map((item, i): [string, unknown] => [String(i), item]) : Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i -= 1) {
        const [key, item] = entries[i]!;
        pending.push([item, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`, textProblem(key)]);
      }
    }
  }
  return found;
}
