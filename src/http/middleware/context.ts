import type { DefaultContext, ParameterizedContext } from 'koa';
import type { RateLimitState } from '../route.js';
import type { AuthContext, SessionContext } from '../../common/who.js';

export type { AuthContext, RateLimitState };

export interface AppState {
  requestId: string;
  auth?: AuthContext;
  session?: SessionContext;
  rateLimit?: RateLimitState;
  /** The query string after validation (coerced, defaults applied). */
  query?: Record<string, unknown>;
  /** How the metrics name a path that no router matched, set by what answers it (the Developer page, the probes). */
  route?: string;
  /** The `code` of the problem answered, set by the error renderer (for the request log). */
  errorCode?: string;
  /**
   * A key that was identified and then refused (expired, or from an address its allowlist
   * lacks), or whose lookup failed while the database was away (known from this process's
   * cache): its id, for its request log.
   */
  refusedKey?: string;
  /** On a public path (the document), the version of the valid key sent, if one was: what the document describes by default. */
  pinned?: string;
  /** The API version the request is answered in (http/middleware/api-version.ts); unset on the internal API. */
  apiVersion?: string;
  /** The JSON body after validation against the route's schema. */
  body?: Record<string, unknown>;
}

export type AppContext = DefaultContext;
export type Ctx = ParameterizedContext<AppState, AppContext>;
