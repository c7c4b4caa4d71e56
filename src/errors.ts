/** The one table of stable error codes. Clients branch on `code`; status and title follow from it. */
export const ERROR_CODES = {
  invalid_parameter: { status: 400, title: 'Invalid query parameter' },
  invalid_cursor: { status: 400, title: 'Invalid cursor' },
  invalid_json: { status: 400, title: 'Invalid JSON' },
  missing_token: { status: 401, title: 'Missing bearer token' },
  invalid_token: { status: 401, title: 'Invalid bearer token' },
  insufficient_scope: { status: 403, title: 'Insufficient scope' },
  plan_forbids_webhooks: { status: 403, title: 'Plan forbids webhooks' },
  webhook_limit_reached: { status: 403, title: 'Webhook limit reached' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  invalid_transition: { status: 409, title: 'Invalid state transition' },
  idempotency_conflict: { status: 409, title: 'Idempotency key reused with another request' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  validation_failed: { status: 422, title: 'Validation failed' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal server error' },
  not_implemented: { status: 501, title: 'Not implemented' },
  unavailable: { status: 503, title: 'Service unavailable' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

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
    this.title = ERROR_CODES[code].title;
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

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
]);

/** True for errors that mean "the database cannot be reached now", as opposed to a bug. */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  return error.name === 'KnexTimeoutError';
}
