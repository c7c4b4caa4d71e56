import type { ValidateFunction } from 'ajv';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { ApiError } from '../../common/errors.js';
import { BODY_ENCODINGS, JSON_TYPES, MAX_BODY_BYTES, textProblems } from '../../common/wire.js';
import type { Ctx } from './context.js';
import { bodyErrors } from '../../kernel/messages.js';

const parse = koaBody({
  json: true,
  urlencoded: false,
  text: false,
  multipart: false,
  jsonLimit: MAX_BODY_BYTES,
  jsonStrict: true,
  jsonTypes: JSON_TYPES,
  // The text as well (ctx.request.rawBody): whether it escapes what cannot be stored is asked of it.
  includeUnparsed: true,
  parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH],
});

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
 * co-body's errors carry the status that raw-body chose: 400 (bad JSON), 413, 415 (charset or
 * an unknown Content-Encoding); a compressed body that does not decode carries none.
 */
function parseError(caught: unknown, encoding: string): ApiError | undefined {
  if (isDecodingError(caught)) {
    return new ApiError('invalid_json', `The body could not be decoded as Content-Encoding: ${encoding} (${(caught as Error).message}); send it whole, or without compression.`);
  }
  const status = (caught as { status?: unknown }).status;
  if (status === 413) return new ApiError('payload_too_large', `The body is over ${MAX_BODY_BYTES} bytes (1 MiB).`);
  if (status === 415) return new ApiError('unsupported_media_type', `${(caught as Error).message}; send UTF-8 JSON, with a Content-Encoding of ${BODY_ENCODINGS.join(', ')} or none.`);
  if (status === 400) return new ApiError('invalid_json', `The body is not valid JSON: ${(caught as Error).message}.`);
  return undefined;
}

/**
 * Reads a JSON body (at most 1 MiB) and checks it against the route's schema (compiled once, at
 * boot): 415 if it is not JSON, 413 if too large, 400 if it does not parse, 422 with one entry
 * per problem if it does not match or a string (or key) in it cannot be stored as sent (U+0000, half a surrogate pair). The checked body lands in `ctx.state.body`.
 */
export function jsonBody(validate: ValidateFunction, readOnly: ReadonlySet<string>, required: ReadonlySet<string> = new Set((validate.schema as { required?: string[] }).required ?? []), unknownAtTop?: string) {
  return async (ctx: Ctx): Promise<void> => {
    if (!JSON_TYPES.includes(ctx.request.type)) {
      throw new ApiError('unsupported_media_type', `The body must be JSON, sent with Content-Type: application/json${ctx.request.type ? `, not ${ctx.request.type}` : ''}.`);
    }
    try {
      await parse(ctx, async () => undefined);
    } catch (caught) {
      throw parseError(caught, ctx.get('content-encoding') || 'identity') ?? caught;
    }
    // A JSON content type with an empty body reads as {}.
    const body: unknown = ctx.request.body ?? {};
    const valid = validate(body);
    const unstorable = ESCAPED_UNSTORABLE.test(ctx.request.rawBody ?? '') ? textProblems(body) : [];
    if (!valid || unstorable.length > 0) {
      const refused = valid ? [] : bodyErrors(validate.errors ?? [], readOnly, required, unknownAtTop).filter((e) => !unstorable.some((u) => u.pointer === e.pointer));
      const errors = [...unstorable, ...refused];
      throw new ApiError('validation_failed', `The body does not match the schema: ${errors.map((e) => (e.pointer ? `${e.pointer} ${e.message}` : e.message)).join('; ')}.`, { errors });
    }
    ctx.state.body = body as Record<string, unknown>;
  };
}
