import { STATUS_CODES } from 'node:http';

/**
 * The one table of stable error codes. Clients branch on `code`; the status follows from it,
 * and the title is the status phrase, as RFC 9457 asks of a problem whose type is about:blank.
 * What each code means is said once, in openapi/problems.ts.
 */
export const ERROR_CODES = {
  invalid_parameter: { status: 400 },
  invalid_cursor: { status: 400 },
  invalid_json: { status: 400 },
  malformed_request: { status: 400 },
  missing_token: { status: 401 },
  invalid_token: { status: 401 },
  not_signed_in: { status: 401 },
  invalid_credentials: { status: 401 },
  insufficient_scope: { status: 403 },
  insufficient_role: { status: 403 },
  forbidden_origin: { status: 403 },
  plan_forbids_scope: { status: 403 },
  key_limit_reached: { status: 403 },
  plan_forbids_webhooks: { status: 403 },
  webhook_limit_reached: { status: 403 },
  not_found: { status: 404 },
  method_not_allowed: { status: 405 },
  invalid_transition: { status: 409 },
  idempotency_conflict: { status: 409 },
  subscription_disabled: { status: 409 },
  request_timeout: { status: 408 },
  payload_too_large: { status: 413 },
  unsupported_media_type: { status: 415 },
  validation_failed: { status: 422 },
  rate_limited: { status: 429 },
  headers_too_large: { status: 431 },
  internal_error: { status: 500 },
  not_implemented: { status: 501 },
  unavailable: { status: 503 },
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
