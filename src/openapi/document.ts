import { BODY_ENCODINGS, MAX_BODY_BYTES, SANE_REQUEST_ID } from '../common/wire.js';
import type { JsonSchema } from '../kernel/model/index.js';
import type { Registry } from '../kernel/registry/index.js';
import type { Api, Route } from '../http/route.js';
import { withExamples } from './examples.js';
import { eventLogSchemas, eventSchemas, webhooks, type DeliveryFacts } from './events.js';
import { META_SCHEMAS } from './meta.js';
import { pathsOf } from './operation.js';
import { HEADERS, PROBLEM_SCHEMA, ProblemResponses } from './problems.js';
import { resourceSchemas } from './resources.js';
import { WEBHOOK_SCHEMAS } from './webhooks.js';
import { INTERNAL_SCHEMAS } from './internal.js';

const DESCRIPTION = `The public REST API of a workspace: deals, leads, clients, proposals and invoices, with webhooks.

**Authentication.** Every endpoint but this document takes \`Authorization: Bearer <key>\`. A key carries scopes (\`read:deals\`, \`write:deals\`, ..., \`webhooks:manage\`); each operation names the scope it needs under \`security\`.

**Order of checks.** Authentication (401), then the key's rate limit (429), then the route (404/405), then the scope (403), then the input (400/415/422), then the operation.

**Rate limits.** Each key has its own requests-per-minute limit over a sliding 60-second window, across all server processes. Every authenticated answer has \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`; past the limit, 429 with \`Retry-After: 60\`.

**Pagination.** Lists take \`limit\` (1-200, default 50) and \`cursor\` and answer \`{ data, has_more, next_cursor }\`; \`next_cursor\` is null on the last page. Cursors are opaque and tied to their resource and sort.

**Errors.** Every error is \`application/problem+json\` (RFC 9457) with a stable \`code\` and the \`request_id\`; input errors list \`errors\` with a JSON \`pointer\` or a \`parameter\`. No string may hold U+0000 (NUL): in a path it is 404 (no id holds it), in the query string 400, in a body 422 naming its pointer; so is a body's string holding half a surrogate pair on its own.

**Webhooks.** Subscribe with \`POST /webhooks\`; each event type is described under \`webhooks\` with its payload. Deliveries follow Standard Webhooks, so its libraries verify them.`;

/** Request parameters every operation of both documents may take. */
const PARAMETERS: Record<string, JsonSchema> = {
  ContentEncoding: {
    name: 'Content-Encoding',
    in: 'header',
    required: false,
    description: `The body may be compressed. The ${MAX_BODY_BYTES / 1024 / 1024} MiB limit counts the decoded bytes; a body that does not decode is 400 invalid_json, an encoding not listed here 415.`,
    schema: { type: 'string', enum: BODY_ENCODINGS },
  },
  ApiVersion: {
    name: 'Api-Version',
    in: 'header',
    required: false,
    description: "The API version to answer in (YYYY-MM-DD, one of GET /versions); left out, the key's own (its pin). An unknown one is 400 invalid_api_version.",
    schema: { type: 'string', examples: ['2026-11-21'] },
  },
  RequestId: {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'Your own id for this request, echoed back and logged. One that does not match the pattern is replaced by a new UUID.',
    schema: { type: 'string', pattern: SANE_REQUEST_ID.source },
  },
};

/** The headers of components.headers that `parts` of a document refer to (a document lists no header it never uses). */
function headersUsedBy(...parts: unknown[]): Record<string, JsonSchema> {
  const text = JSON.stringify(parts);
  return Object.fromEntries(Object.entries(HEADERS).filter(([name]) => text.includes(`"#/components/headers/${name}"`)));
}

/** The parameters of components.parameters that `paths` refer to. */
function parametersUsedBy(paths: unknown): Record<string, JsonSchema> {
  const text = JSON.stringify(paths);
  return Object.fromEntries(Object.entries(PARAMETERS).filter(([name]) => text.includes(`"#/components/parameters/${name}"`)));
}


/** Reserved paths answer 501 to everything: said in words, since an operation without a 2xx answer stops client generators. */
function reservedText(registry: Registry): string {
  return registry.reserved
    .map((r) => `\n\n**Reserved.** Every method on \`${r.path}\` and below answers 501 \`not_implemented\` (after authentication, before any input check): ${r.description}`)
    .join('');
}

function tags(registry: Registry): JsonSchema[] {
  return [
    ...registry.resources.map(({ def }) => ({ name: def.path.slice(1), description: def.description })),
    { name: 'webhooks', description: 'Webhook subscriptions and their deliveries (scope webhooks:manage).' },
    { name: 'meta', description: 'The service, the calling key, and the catalogs of scopes and events.' },
    { name: 'events', description: 'What a subscription receives: one webhook per event type.' },
  ];
}

/** What tells one API's document from the other's; the rest is built from the routes alike. */
interface DocumentParts {
  description: string;
  /** The one security scheme of the API, by name. */
  scheme: [string, JsonSchema];
  tags: JsonSchema[];
  schemas: Record<string, JsonSchema>;
  webhooks?: JsonSchema;
}

function buildDocument(api: Api, version: string, parts: DocumentParts): JsonSchema {
  const problems = new ProblemResponses();
  const paths = pathsOf(api, problems);
  const responses = problems.all();
  const [scheme, securityScheme] = parts.scheme;
  return {
    openapi: '3.1.0',
    info: { title: api.title, version, description: parts.description, license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: api.base, description: 'This server.' }],
    security: [{ [scheme]: [] }],
    tags: parts.tags,
    paths,
    ...(parts.webhooks ? { webhooks: parts.webhooks } : {}),
    components: { securitySchemes: { [scheme]: securityScheme }, schemas: parts.schemas, responses, headers: headersUsedBy(paths, responses, parts.webhooks), parameters: parametersUsedBy(paths) },
  };
}

/** An API's routes as a caller at an older API version sends them: each route's older input where it has one (src/versions). */
export function apiAt(api: Api, apiVersion: string): Api {
  const routes = api.routes.map((route): Route => {
    const older = route.olderInput?.(apiVersion);
    if (!older) return route;
    const body = older.body && { ...older.body, ...(route.body?.ref ? { ref: route.body.ref } : {}) };
    return { ...route, ...(older.query ? { query: older.query } : {}), ...(body ? { body } : {}) };
  });
  return { ...api, routes };
}

/**
 * The OpenAPI 3.1 document of this server, built from the registry at boot: the same schemas
 * the routes validate with, so it cannot drift from them. `apiVersion` is the API version it
 * describes (give the api and the registry as that version has them: apiAt, Versions.registryAt).
 */
export function buildOpenApi(api: Api, registry: Registry, version: string, delivery: DeliveryFacts, apiVersion?: string): JsonSchema {
  const schemas: Record<string, JsonSchema> = { Problem: PROBLEM_SCHEMA, ...META_SCHEMAS, ...WEBHOOK_SCHEMAS, ...eventSchemas(registry), ...eventLogSchemas(registry) };
  for (const resource of registry.resources) Object.assign(schemas, resourceSchemas(resource));
  return buildDocument(api, version, {
    description: DESCRIPTION + reservedText(registry) + (apiVersion ? `\n\n**API version.** This document describes version ${apiVersion}: send \`Api-Version: ${apiVersion}\` (or use a key pinned to it) to be answered as it says. \`GET /versions\` lists every version and what changed in each; \`?version=YYYY-MM-DD\` on this document picks another.` : ''),
    scheme: ['bearerAuth', { type: 'http', scheme: 'bearer', description: 'An API key (`wsk_...`), made by an operator with `npm run admin -- key create`. Shown once, at creation.' }],
    tags: tags(registry),
    schemas,
    webhooks: withExamples(webhooks(registry, delivery), schemas),
  });
}

const INTERNAL_DESCRIPTION = `The internal API of the administration area: what its Developer page runs on. It is not the public API (that one is at \`/v1\`, with its own document at \`/v1/openapi.json\`).

**Authentication.** A session, opened by \`POST /session\` with an email and a password and carried by the \`ws_session\` cookie (HttpOnly, SameSite=Strict). An API key is never accepted here. A session ends after 12 hours without use, after 7 days in any case, at sign-out, and when its user is disabled or given a new password.

**Roles.** Every user may read; changes need the \`admin\` role (\`x-required-role\`), and a \`viewer\` gets 403 \`insufficient_role\`.

**Cross-site requests.** Every POST, PATCH, PUT and DELETE must carry an \`Origin\` header equal to the service's own origin (or one listed in \`ADMIN_ORIGINS\`); otherwise 403 \`forbidden_origin\`, whatever the cookie says.

**Errors and lists** are as in the public API: \`application/problem+json\` with a stable \`code\` and the \`request_id\`; lists take \`limit\` and \`cursor\` and answer \`{ data, has_more, next_cursor }\`, newest first.`;

/** The internal API's document: generated from its routes like the public one, sharing no path with it. */
export function buildInternalOpenApi(api: Api, version: string): JsonSchema {
  return buildDocument(api, version, {
    description: INTERNAL_DESCRIPTION,
    scheme: ['cookieAuth', { type: 'apiKey', in: 'cookie', name: 'ws_session', description: 'The session cookie set by `POST /session`.' }],
    tags: [
      { name: 'session', description: 'Signing in and out.' },
      { name: 'workspace', description: 'The workspace, its plan and its usage.' },
      { name: 'keys', description: 'API keys of the workspace and the scopes they may hold.' },
      { name: 'usage', description: "The public API's answers per key and hour." },
      { name: 'webhooks', description: 'Webhook subscriptions and their deliveries: the operations and rules of the public API.' },
      { name: 'audit', description: 'Who changed what, and when.' },
      { name: 'meta', description: 'This document.' },
    ],
    schemas: { Problem: PROBLEM_SCHEMA, ...INTERNAL_SCHEMAS, ...WEBHOOK_SCHEMAS },
  });
}
