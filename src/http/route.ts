import type Cookies from 'cookies';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Stores } from '../kernel/storage/index.js';
import type { Deps } from '../deps.js';
import type { Versions } from '../versions/index.js';
import type { ErrorCode } from '../common/errors.js';
import type { JsonSchema, Typed } from '../kernel/model/index.js';
import { actorOfUser, authenticated, type Actor, type AuthContext, type SessionContext, type Who } from '../common/who.js';
import { workspaceIn } from '../common/modes.js';

/** The key's rate-limit window after this request. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the next slot frees. */
  reset: number;
}

/** What route handlers may use: the shared pieces, and how webhook hosts are resolved (host -> addresses). */
export type ApiDeps = Pick<Deps, 'db' | 'reads' | 'redis' | 'clock' | 'notifier' | 'config' | 'secrets'> & {
  resolve: (host: string) => Promise<string[]>;
  /** Each resource's store (kernel/storage/store.ts), built once for this database. */
  stores: Stores;
  /** The API's versions (src/versions): which exist, the latest, each resource's older shapes. */
  versions: Versions;
};

/**
 * What a request that passed `schema` holds: the type written on a Typed schema, else what
 * json-schema-to-ts reads from the schema itself (a literal: defaults make a member present,
 * as ajv fills them in), else a plain record (no schema).
 */
export type InputOf<S> = [S] extends [Typed<infer T>] ? T : [S] extends [undefined] ? Record<string, unknown> : S extends JSONSchema ? (FromSchema<S> extends infer T extends Record<string, unknown> ? T : Record<string, unknown>) : Record<string, unknown>;

/** One request, as a handler sees it: checked input, never the HTTP framework. */
export interface RouteInput<Q = Record<string, unknown>, B = Record<string, unknown>> {
  deps: ApiDeps;
  /** The calling key (the public API); absent on a public route and on the internal API. */
  auth: AuthContext | undefined;
  /** The signed-in person (the internal API); absent on a public route and on the public API. */
  session: SessionContext | undefined;
  /** The client's address (X-Forwarded-For's only behind TRUST_PROXY). */
  ip: string;
  /** The request came over https: a TLS socket, or X-Forwarded-Proto: https behind TRUST_PROXY. */
  secure: boolean;
  rateLimit: RateLimitState | undefined;
  method: string;
  /** The request path, as sent (for Idempotency-Key, which ties a key to its endpoint). */
  path: string;
  params: Record<string, string>;
  /** The query string after validation (coerced, defaults applied), of the type its schema declares. */
  query: Q;
  /** The JSON body after validation, of the type its schema declares; {} for a route without one. */
  body: B;
  /** The request's headers, names in lower case. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Koa's cookies (read and set), on the internal API (credentials: 'session'); undefined on the public one. */
  cookies: Cookies | undefined;
  /** The API version the request is answered in (`Api-Version`); '' on an API without versions (the internal one). */
  version: string;
}

/** A request header ('' when absent or repeated). Not a method of the input: no closure per request. */
export function headerOf(input: Pick<RouteInput, 'headers'>, name: string): string {
  const value = input.headers[name.toLowerCase()];
  return typeof value === 'string' ? value : '';
}

/** What a handler answers: a status (200 by default), a JSON body or text already serialised, headers. */
export interface Reply {
  status?: number;
  body?: unknown;
  /** A body already serialised, sent as it is (with `type`, JSON by default). */
  text?: string;
  type?: string;
  headers?: Record<string, string>;
}

export type Handle<Q = Record<string, unknown>, B = Record<string, unknown>> = (input: RouteInput<Q, B>) => Reply | Promise<Reply>;

export interface Success {
  status: number;
  description: string;
  /** The JSON body's schema; none for 204. */
  schema?: JsonSchema;
  headers?: Record<string, JsonSchema>;
}

/** A request body: the schema it is checked with and the one the document names. */
export interface BodySpec<S extends JsonSchema = JsonSchema> {
  /** What the body is validated against (compiled once, at mount); also the type the handler's body has. */
  schema: S;
  /** How the document refers to it (a $ref), when it is a named component. */
  ref?: JsonSchema;
  /** Media types it may come as; application/json by default. */
  types?: readonly string[];
  /** Fields the service sets: refused with "is read-only" rather than "unknown". */
  readOnly?: readonly string[];
  /** Fields that may not be null (for the message), beyond the schema's own `required`. */
  required?: readonly string[];
  /** What a member the schema does not know is told at the body's top level; by default, that the body does not take it and which fields it does. */
  unknownAtTop?: string;
}

/**
 * One operation of an API, declared once: the router mounts it (checks in the contract's order: scope,
 * query, body, then the handler) and the OpenAPI builder describes it from the same data.
 */
export interface Route<Q = Record<string, unknown>, B = Record<string, unknown>> {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Relative to the API's base, in OpenAPI form: `/deals/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /**
   * Who may call it. On an API of keys: the scope the key needs, null for any valid key. On an
   * API of sessions: the role the user needs ('admin'), null for any signed-in user. 'public':
   * no credentials at all.
   */
  access: string | null | 'public';
  pathParams?: Record<string, JsonSchema>;
  /** The query string's JSON Schema; anything not in it is refused. None: no parameters at all. */
  query?: JsonSchema;
  headerParams?: JsonSchema[];
  body?: BodySpec;
  success: Success;
  /** Answers other than success and the errors (a GET's 304), described beside them. */
  otherAnswers?: readonly Success[];
  /** What it can answer beyond the errors of every (authenticated) request. */
  errors: readonly ErrorCode[];
  /**
   * The query and the body as a caller of an older API version sends them, where they differ
   * from the latest (src/versions): checked with these instead, and converted up by the handler.
   */
  olderInput?(version: string): { query?: JsonSchema; body?: BodySpec } | undefined;
  /** A method, so that a route of any input is a Route (the table holds routes of many). */
  handle(input: RouteInput<Q, B>): Reply | Promise<Reply>;
}

/**
 * A route whose handler receives the input its schemas declare: `input.query` and
 * `input.body` are of the types the query's and the body's schemas say (InputOf), checked by
 * the compiler against the handler's use of them, as ajv checks the request against the same
 * schemas before the handler runs.
 */
export function route<const QS extends JsonSchema | undefined = undefined, const BS extends JsonSchema = JsonSchema>(
  declared: Omit<Route, 'query' | 'body' | 'handle'> & { query?: QS; body?: BodySpec<BS>; handle(input: RouteInput<InputOf<QS>, InputOf<BS>>): Reply | Promise<Reply> },
): Route {
  return declared as unknown as Route;
}

/** An API: where it lives, how callers prove who they are, its routes, and its document's title. */
export interface Api {
  base: string;
  title: string;
  /** 'key': Bearer API keys, rate-limited (the public API); 'session': a signed-in person's cookie (the internal API). */
  credentials: 'key' | 'session';
  routes: readonly Route[];
  /** The API versions before the latest (src/versions), whose callers' input routes may check otherwise (olderInput). */
  olderVersions?: readonly string[];
}

/** The caller of an authenticated route (mount() lets none through without one). */
export function caller(input: RouteInput): AuthContext {
  return authenticated(input.auth);
}

/**
 * The workspace acting, its actor and address. A signed-in person's is the workspace of the mode
 * the route's `mode` parameter names (common/modes.ts MODE_PARAMETER; live where the route has none).
 */
export function who(input: RouteInput): Who {
  if (input.session) {
    const { user, workspace } = input.session;
    const mode = input.query.mode === 'test' ? 'test' : 'live';
    return { workspace: mode === 'live' ? workspace : { ...workspace, id: workspaceIn(workspace.id, mode) }, actor: actorOfUser(user), ip: input.ip };
  }
  const { key, workspace } = caller(input);
  const actor: Actor = { type: 'api_key', id: key.id, label: `${key.name} (${key.prefix}...)` };
  return { workspace, actor, ip: input.ip };
}

/** The signed-in person of an internal route (mount() lets none through without one). */
export function signedIn(input: RouteInput): SessionContext {
  if (!input.session) throw new Error('route reached without a session');
  return input.session;
}
