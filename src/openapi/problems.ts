import { ERROR_CODES, type ErrorCode } from '../common/errors.js';
import type { JsonSchema } from '../kernel/model/index.js';

/**
 * The headers answers carry, described once under components.headers; `required` says the
 * header is on every answer that lists it.
 */
export const HEADERS: Record<string, JsonSchema> = {
  'X-Request-Id': { required: true, description: "The request's id: the client's own X-Request-Id if it was sane, else a new UUID. Quote it when reporting a problem.", schema: { type: 'string' } },
  'Api-Version': { required: true, description: 'The API version the answer is in (YYYY-MM-DD): the Api-Version the request sent, else the version its key is pinned to.', schema: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' } },
  'X-RateLimit-Limit': { required: true, description: "The key's requests-per-minute limit.", schema: { type: 'integer', minimum: 1 } },
  'X-RateLimit-Remaining': { required: true, description: 'Requests the key may still make in the current 60-second window.', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { required: true, description: 'Seconds until the next slot of the window frees.', schema: { type: 'integer', minimum: 0 } },
  'Retry-After': { required: true, description: 'Seconds to wait before trying again.', schema: { type: 'string', pattern: '^[0-9]+$' } },
  'WWW-Authenticate': { required: true, description: 'The Bearer challenge (RFC 6750): realm="workspace", and error="invalid_token" for a bad or expired token (an expired one with error_description saying when it expired).', schema: { type: 'string' } },
  'WWW-Authenticate-Scope': { description: 'On insufficient_scope: Bearer error="insufficient_scope", scope="<the scope needed>".', schema: { type: 'string' } },
  Location: { required: true, description: 'Where the new object lives.', schema: { type: 'string' } },
  ETag: { required: true, description: 'The object\'s version as an entity tag (`"3"`): send it back as If-Match to change the object only if nobody else has since.', schema: { type: 'string', pattern: '^"[1-9][0-9]*"$' } },
  'Idempotent-Replayed': { description: '"true" when this is the first answer to the same Idempotency-Key, replayed.', schema: { type: 'string', enum: ['true'] } },
};

export const header = (name: string): JsonSchema => ({ $ref: `#/components/headers/${name}` });

/** Headers on every answer to an authenticated request (docs/reference.md section 2). */
export function authenticatedHeaders(): Record<string, JsonSchema> {
  return { 'X-Request-Id': header('X-Request-Id'), 'X-RateLimit-Limit': header('X-RateLimit-Limit'), 'X-RateLimit-Remaining': header('X-RateLimit-Remaining'), 'X-RateLimit-Reset': header('X-RateLimit-Reset') };
}

export function publicHeaders(): Record<string, JsonSchema> {
  return { 'X-Request-Id': header('X-Request-Id') };
}

/** RFC 9457 problem details, with our stable `code`. */
export const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'An error (RFC 9457 problem details). Branch on `code`; `detail` is for people.',
  required: ['type', 'title', 'status', 'code', 'detail', 'request_id'],
  properties: {
    type: { type: 'string', const: 'about:blank' },
    title: { type: 'string', description: 'The HTTP status phrase (RFC 9457, for a problem of type about:blank), such as "Unprocessable Entity".' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    code: { type: 'string', enum: Object.keys(ERROR_CODES) },
    detail: { type: 'string' },
    request_id: { type: 'string' },
    errors: {
      type: 'array',
      description: 'For input errors: what is wrong, where. `pointer` is a JSON Pointer into the body; `parameter` names a query parameter or header.',
      items: {
        type: 'object',
        required: ['message'],
        properties: { pointer: { type: 'string' }, parameter: { type: 'string' }, message: { type: 'string' } },
      },
    },
    current_version: { type: 'integer', minimum: 1, description: "On version_mismatch: the object's version now." },
    versions: { type: 'array', items: { type: 'string' }, description: 'On invalid_api_version: the versions the API has, oldest first.' },
  },
};

/** Error headers beyond X-Request-Id, by status: required ones must be on every such answer. */
function errorHeaders(status: number, codes: readonly ErrorCode[], authenticated: boolean): Record<string, JsonSchema> {
  // These can also come before the key is known (a failed authentication, a database down during
  // the key lookup), so they carry the rate-limit headers only sometimes. A 403 ip_not_allowed
  // comes before the key's limit too: a leaked key used from elsewhere does not spend it.
  const beforeTheKey = [401, 408, 429, 431, 500, 503].includes(status) || (status === 403 && codes.includes('ip_not_allowed'));
  const base = authenticated && !beforeTheKey ? authenticatedHeaders() : publicHeaders();
  if (status === 401 && codes.some((c) => c === 'missing_token' || c === 'invalid_token')) return { ...base, 'WWW-Authenticate': header('WWW-Authenticate') };
  if (status === 403 && codes.includes('insufficient_scope')) return { ...base, 'WWW-Authenticate': header('WWW-Authenticate-Scope') };
  if (status === 429 || status === 503) return { ...base, 'Retry-After': header('Retry-After') };
  if (status === 412) return { ...base, ETag: header('ETag') };
  return base;
}

/** The problem schema narrowed to the codes one answer can carry. */
function problemWith(codes: readonly ErrorCode[]): JsonSchema {
  return { allOf: [{ $ref: '#/components/schemas/Problem' }, { type: 'object', properties: { code: { type: 'string', enum: [...codes] } } }] };
}

const pascalCode = (code: string) => code.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');

/**
 * The error answers of the document, each described once under components.responses and
 * named after its codes (`InvalidParameterOrInvalidCursor`); operations refer to them.
 */
export class ProblemResponses {
  private readonly components = new Map<string, JsonSchema>();

  /** An operation's error answers, grouped by status: each lists its codes (as an enum and in words) and its headers. */
  for(codes: readonly ErrorCode[], authenticated: boolean): Record<string, JsonSchema> {
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of codes) {
      const status = ERROR_CODES[code].status;
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    const responses: Record<string, JsonSchema> = {};
    for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
      const name = `${authenticated ? '' : 'Public'}${group.map(pascalCode).join('Or')}`;
      if (!this.components.has(name)) {
        this.components.set(name, {
          description: group.map((code) => `\`${code}\`: ${ERROR_CODES[code].when}.`).join(' '),
          headers: errorHeaders(status, group, authenticated),
          content: { 'application/problem+json': { schema: problemWith(group) } },
        });
      }
      responses[String(status)] = { $ref: `#/components/responses/${name}` };
    }
    return responses;
  }

  all(): Record<string, JsonSchema> {
    return Object.fromEntries([...this.components].sort(([a], [b]) => (a < b ? -1 : 1)));
  }
}

/** Errors any authenticated operation can answer, whatever it does. */
export const AUTHENTICATED_ERRORS: readonly ErrorCode[] = ['missing_token', 'invalid_token', 'key_expired', 'ip_not_allowed', 'rate_limited', 'internal_error', 'unavailable'];

/** Errors any operation of the internal API can answer, signed in or not. */
export const SESSION_ERRORS: readonly ErrorCode[] = ['internal_error', 'unavailable'];

/** Errors node:http answers for any request, public or not, before the app sees it (http/server.ts). */
export const TRANSPORT_ERRORS: readonly ErrorCode[] = ['request_timeout', 'headers_too_large'];
