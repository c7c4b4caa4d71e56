import createClient from 'openapi-fetch';
import type { components, paths } from '../generated/internal-api';

/** The internal API's schemas, as generated from its OpenAPI document: a renamed field fails the build. */
export type Schemas = components['schemas'];
export type Session = Schemas['Session'];
export type ProblemBody = Schemas['Problem'];

/** The typed client of the internal API (same origin: the session cookie goes with every call). */
export const api = createClient<paths>({ baseUrl: '/internal/v1', credentials: 'same-origin' });

let signedOut: () => void = () => undefined;

/** Called when an answer says the session is over (expired, ended elsewhere, user disabled). */
export function onSignedOut(callback: () => void): void {
  signedOut = callback;
}

api.use({
  onResponse({ request, response }) {
    if (response.status === 401 && !new URL(request.url).pathname.endsWith('/session')) signedOut();
    return undefined;
  },
});

/** One thing wrong with what was sent: where (a JSON Pointer into the body, or a query parameter) and what. */
export interface ProblemDetail {
  where?: string;
  message: string;
}

/** An answer that was not a success, in words a person can act on. */
export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ProblemDetail[] = [],
    readonly requestId?: string,
  ) {
    super(message);
  }
}

function problemOf(body: unknown, response: Response): Problem {
  const p = (body ?? {}) as Partial<ProblemBody>;
  const details = (p.errors ?? []).map((e) => ({ ...((e.pointer ?? e.parameter) ? { where: e.pointer ?? e.parameter } : {}), message: e.message }));
  return new Problem(response.status, p.code ?? `http_${response.status}`, p.detail ?? p.title ?? `The server answered ${response.status}.`, details, p.request_id ?? response.headers.get('x-request-id') ?? undefined);
}

/**
 * The data of a successful answer, or a thrown Problem. A network failure becomes a Problem
 * too, so every caller shows one kind of message.
 */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch {
    throw new Problem(0, 'network', 'The server could not be reached. Check the connection and try again.');
  }
  if (!result.response.ok) throw problemOf(result.error, result.response);
  return result.data as T;
}
