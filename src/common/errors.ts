import { STATUS_CODES } from 'node:http';
import { MAX_BODY_BYTES } from './wire.js';

/**
 * The one table of stable error codes. Clients branch on `code`; the status follows from it,
 * and the title is the status phrase, as RFC 9457 asks of a problem whose type is about:blank.
 * `when` is what the code means to a client, in the words of docs/reference.md section 4 (the documents
 * state it for each error answer).
 */
export const ERROR_CODES = {
  invalid_parameter: { status: 400, when: 'a query parameter (or the Idempotency-Key header) is unknown or invalid' },
  invalid_cursor: { status: 400, when: 'the cursor is malformed, or was made for another resource or sort' },
  invalid_json: { status: 400, when: 'the body is not valid JSON, is not UTF-8, or is compressed (Content-Encoding) and does not decode' },
  invalid_api_version: { status: 400, when: 'the Api-Version header is not a version the API has (`versions` lists those it has)' },
  malformed_request: { status: 400, when: 'the request is not valid HTTP/1.1 (answered before any other check)' },
  missing_token: { status: 401, when: 'no Authorization header' },
  invalid_token: { status: 401, when: 'the token is malformed (its checksum does not match), unknown or revoked' },
  key_expired: { status: 401, when: 'the key has expired (its expires_at has passed): use another key' },
  not_signed_in: { status: 401, when: 'no session cookie, or the session has ended (signed out, expired, or the user was disabled or given a new password): sign in again' },
  invalid_credentials: { status: 401, when: 'the email or the password is wrong (the answer does not say which)' },
  ip_not_allowed: { status: 403, when: "the key's allowlist (allowed_ips) does not include the client's address" },
  insufficient_scope: { status: 403, when: "the key lacks this operation's scope" },
  insufficient_role: { status: 403, when: 'the signed-in user is a viewer: only an admin may change anything' },
  forbidden_origin: { status: 403, when: "a POST, PATCH, PUT or DELETE without an Origin header naming the service's own origin (or one of ADMIN_ORIGINS)" },
  plan_forbids_scope: { status: 403, when: "the workspace's plan does not allow these scopes (a read_only plan has no write: scopes) or gives no API access" },
  key_limit_reached: { status: 403, when: "the plan's number of live keys is reached: revoke one first" },
  plan_forbids_webhooks: { status: 403, when: "the workspace's plan has no webhooks" },
  webhook_limit_reached: { status: 403, when: "the plan's subscriptions for this calendar month (UTC) are used up" },
  not_found: { status: 404, when: 'no such object in this workspace' },
  method_not_allowed: { status: 405, when: 'the path does not take this method' },
  invalid_transition: { status: 409, when: 'the state machine does not allow this move; `detail` and `errors` name the allowed targets' },
  idempotency_conflict: { status: 409, when: 'the Idempotency-Key was used with another body or endpoint in the last 24 h' },
  key_not_live: { status: 409, when: 'the key is revoked, expired or already rolled: it cannot be rolled' },
  subscription_disabled: { status: 409, when: 'the webhook subscription is disabled; enable it first' },
  version_mismatch: { status: 412, when: 'If-Match names a version the object has moved on from; `current_version` (and the ETag header) give its version now' },
  request_timeout: { status: 408, when: 'the headers or the whole request did not arrive within the server\'s time limit (answered before any other check; the connection is closed)' },
  payload_too_large: { status: 413, when: `the body is over ${MAX_BODY_BYTES / 1024 / 1024} MiB (decoded)` },
  unsupported_media_type: { status: 415, when: 'the body is not application/json, or its charset or Content-Encoding is not one the service reads' },
  validation_failed: { status: 422, when: 'the body does not match the schema; `errors` has one entry per field' },
  rate_limited: { status: 429, when: "the key's per-minute limit is reached, or too many failed authentications or sign-ins came from this address (or for this email)" },
  headers_too_large: { status: 431, when: 'the request line (the URL) and headers together are over 16 KiB (answered before any other check)' },
  internal_error: { status: 500, when: 'a fault on our side; quote the request id' },
  not_implemented: { status: 501, when: 'the path is reserved and not built yet' },
  unavailable: { status: 503, when: 'the database cannot be reached; retry after Retry-After' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The HTTP status phrase ("Unprocessable Entity"): a problem's title. */
export function statusPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

export interface ErrorItem {
  pointer?: string;
  parameter?: string;
  message: string;
}

export interface ApiErrorExtras {
  errors?: ErrorItem[];
  /** Response headers that belong to this error (Retry-After, WWW-Authenticate, Allow). */
  headers?: Record<string, string>;
  /** Members of the problem beyond RFC 9457's (`current_version` of a version_mismatch). */
  fields?: { current_version?: number; versions?: readonly string[] };
}

export class ApiError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extras: ApiErrorExtras = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code].status;
    this.title = statusPhrase(this.status);
  }
}

export interface Problem {
  type: 'about:blank';
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  request_id: string;
  errors?: ErrorItem[];
  current_version?: number;
  versions?: readonly string[];
}

export function toProblem(error: ApiError, requestId: string): Problem {
  const problem: Problem = {
    type: 'about:blank',
    title: error.title,
    status: error.status,
    code: error.code,
    detail: error.detail,
    request_id: requestId,
  };
  if (error.extras.errors) problem.errors = error.extras.errors;
  if (error.extras.fields) Object.assign(problem, error.extras.fields);
  return problem;
}

/**
 * The connection was lost while a transaction committed: the database may have written it all
 * or nothing, and this process cannot tell which. `cause` is the driver's error.
 */
export class CommitOutcomeUnknown extends Error {
  constructor(override readonly cause: unknown) {
    super('the connection was lost while committing');
    this.name = 'CommitOutcomeUnknown';
  }
}

/** The 503 for a write whose commit may or may not have happened: what is safe to do next. */
export function outcomeUnknown(withIdempotencyKey: boolean): ApiError {
  const next = withIdempotencyKey
    ? 'Retrying with the same Idempotency-Key is safe: if the change was made, the retry answers it again instead of making it twice.'
    : 'Check whether it was made before retrying a POST (a PATCH or DELETE may simply be repeated); send an Idempotency-Key with every POST so that a retry is always safe.';
  return new ApiError('unavailable', `The connection to the database was lost while the change was being committed, so whether it was made is unknown. ${next}`, { headers: { 'Retry-After': '5' } });
}

/** What stops an entry point before it serves: said in one line, without a stack trace. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}
