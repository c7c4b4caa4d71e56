import { isUtf8 } from 'node:buffer';
import Bourne from '@hapi/bourne';
import type { ValidateFunction } from 'ajv';
import inflate from 'inflation';
import getRawBody from 'raw-body';
import { ApiError } from '../../common/errors.js';
import { BODY_ENCODINGS, JSON_TYPES, MAX_BODY_BYTES, textProblems } from '../../common/wire.js';
import type { Ctx } from './context.js';
import { bodyErrors } from '../../kernel/model/index.js';

/** U+FEFF at the start of the text. */
const BOM = /^\uFEFF/;

/** A JSON text that is an object or an array (RFC 8259 whitespace first): an array goes on to be refused by the schema (422). */
const OBJECT_OR_ARRAY = /^[ \t\n\r]*[[{]/;

/**
 * How U+0000 and half a surrogate pair can reach a JSON text: only as `\u` escapes (raw, the
 * one is not JSON and the other not UTF-8), so a body whose text has none is not walked.
 */
const ESCAPED_UNSTORABLE = /\\u(?:0000|d[89a-f])/i;

/** zlib's errors (Z_DATA_ERROR, Z_BUF_ERROR) and brotli's (ERR__ERROR_FORMAT_...). */
function isDecodingError(caught: unknown): boolean {
  const code = (caught as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR__'));
}

/**
 * raw-body's and inflation's errors carry a status: 413 (over the limit), 415 (an unknown
 * Content-Encoding), 400 (a body cut short, or longer or shorter than its Content-Length); a
 * compressed body that does not decode carries none.
 */
function readError(caught: unknown, encoding: string): ApiError | undefined {
  if (isDecodingError(caught)) {
    return new ApiError('invalid_json', `The body could not be decoded as Content-Encoding: ${encoding} (${(caught as Error).message}); send it whole, or without compression.`);
  }
  const status = (caught as { status?: unknown }).status;
  if (status === 413) return new ApiError('payload_too_large', `The body is over ${MAX_BODY_BYTES} bytes (1 MiB).`);
  if (status === 415) return new ApiError('unsupported_media_type', `${(caught as Error).message}; send UTF-8 JSON, with a Content-Encoding of ${BODY_ENCODINGS.join(', ')} or none.`);
  if (status === 400) return new ApiError('invalid_json', `The body could not be read whole: ${(caught as Error).message}.`);
  return undefined;
}

/**
 * The body's text and its value. Its bytes are read whole (at most MAX_BODY_BYTES once
 * decoded), then must be UTF-8: JSON is UTF-8 (RFC 8259), whatever charset the Content-Type
 * names, and a body in another encoding (Latin-1 or Windows-1252 from an older client) would
 * otherwise be stored with U+FFFD in place of its accented letters. raw-body, inflation and
 * bourne are what koa-body reads with; koa-body itself decodes before anyone sees the bytes.
 */
function readJson(ctx: Ctx): Promise<{ text: string; value: unknown }> {
  const req = ctx.req;
  const encoding = req.headers['content-encoding'] || 'identity';
  const length = req.headers['content-length'];
  let bytes: Promise<Buffer>;
  try {
    // The declared length is checked against what arrives only when nothing is to be decoded.
    bytes = getRawBody(inflate(req), { limit: MAX_BODY_BYTES, ...(length && encoding === 'identity' ? { length: Number(length) || 0 } : {}) });
  } catch (caught) {
    // An encoding inflation does not know is refused as it is thrown.
    bytes = Promise.reject(caught);
  }
  // A reaction to the bytes rather than an async frame: a promise less a request.
  return bytes.then(jsonOf, (caught: unknown) => {
    throw readError(caught, encoding) ?? caught;
  });
}

/** The body's bytes as UTF-8 text and the JSON value it holds. */
function jsonOf(bytes: Buffer): { text: string; value: unknown } {
  if (!isUtf8(bytes)) {
    throw new ApiError('invalid_json', 'The body is not UTF-8: send JSON as UTF-8 (RFC 8259), whatever charset the Content-Type names; letters in another encoding (Latin-1, Windows-1252) would be stored changed.');
  }
  // A byte order mark first (PowerShell 5's UTF-8, Notepad's files) is passed over, as RFC 8259 lets a parser do: the rest is the JSON.
  const text = bytes.toString('utf8').replace(BOM, '');
  if (text === '') return { text, value: {} };
  if (!OBJECT_OR_ARRAY.test(text)) throw new ApiError('invalid_json', 'The body must be a JSON object, not a string, number, boolean or null on its own.');
  try {
    return { text, value: Bourne.parse(text, { protoAction: 'error' }) as unknown };
  } catch (caught) {
    throw new ApiError('invalid_json', `The body is not valid JSON: ${(caught as Error).message}.`);
  }
}

/**
 * Reads a JSON body (at most 1 MiB) and checks it against the route's schema (compiled once, at
 * boot): 415 if it is not JSON, 413 if too large, 400 if it does not parse, 422 with one entry
 * per problem if it does not match or a string (or key) in it cannot be stored as sent (U+0000, half a surrogate pair). The checked body lands in `ctx.state.body`.
 */
export function jsonBody(validate: ValidateFunction, readOnly: ReadonlySet<string>, required: ReadonlySet<string> = new Set((validate.schema as { required?: string[] }).required ?? []), unknownAtTop?: string) {
  // Not async: the body is checked in a reaction to its reading (a promise less a request).
  return (ctx: Ctx): Promise<void> => {
    if (!JSON_TYPES.includes(ctx.request.type)) {
      throw new ApiError('unsupported_media_type', `The body must be JSON, sent with Content-Type: application/json${ctx.request.type ? `, not ${ctx.request.type}` : ''}.`);
    }
    return readJson(ctx).then((read) => {
      // A JSON content type with an empty body reads as {}.
      const body = read.value;
      const valid = validate(body);
      const unstorable = ESCAPED_UNSTORABLE.test(read.text) ? textProblems(body) : [];
      if (!valid || unstorable.length > 0) {
        const refused = valid ? [] : bodyErrors(validate.errors ?? [], readOnly, required, unknownAtTop).filter((e) => !unstorable.some((u) => u.pointer === e.pointer));
        const errors = [...unstorable, ...refused];
        throw new ApiError('validation_failed', `The body does not match the schema: ${errors.map((e) => (e.pointer ? `${e.pointer} ${e.message}` : e.message)).join('; ')}.`, { errors });
      }
      ctx.state.body = body as Record<string, unknown>;
    });
  };
}
