import type { ErrorCode } from '../common/errors.js';
import type { JsonSchema } from '../kernel/model/index.js';
import type { Api, Route } from '../http/route.js';
import { AUTHENTICATED_ERRORS, SESSION_ERRORS, TRANSPORT_ERRORS, authenticatedHeaders, header, publicHeaders, type ProblemResponses } from './problems.js';

/** What reading a JSON body can answer (src/http/middleware/body.ts). */
const BODY_ERRORS: readonly ErrorCode[] = ['invalid_json', 'payload_too_large', 'unsupported_media_type', 'validation_failed'];

/** Refs name components; everything else in the document is built from the route's own schemas. */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** A path or query parameter, described by its schema's description. */
function parameter(name: string, location: 'path' | 'query', schema: JsonSchema): JsonSchema {
  return { name, in: location, required: location === 'path', ...(typeof schema.description === 'string' ? { description: schema.description } : {}), schema };
}

/** Errors a route of an API can answer before its own checks, by how callers are identified. */
function callerErrors(spec: Route, credentials: Api['credentials']): readonly ErrorCode[] {
  const isPublic = spec.access === 'public';
  // Every request to an API of keys may name an API version it does not have (docs/reference.md section 19).
  if (credentials === 'key') return isPublic ? ['invalid_api_version'] : [...AUTHENTICATED_ERRORS, 'invalid_api_version'];
  // The internal API: the Origin check on every change, then the session (unless public).
  return [...(spec.method === 'get' ? [] : (['forbidden_origin'] as const)), ...(isPublic ? [] : (['not_signed_in'] as const)), ...SESSION_ERRORS];
}

/** One OpenAPI operation object, from its route: parameters, body, the success answer and every error answer. */
export function operation(spec: Route, problems: ProblemResponses, credentials: Api['credentials'] = 'key'): JsonSchema {
  const isPublic = spec.access === 'public';
  const rateLimited = credentials === 'key' && !isPublic;
  const parameters = [
    ...Object.entries(spec.pathParams ?? {}).map(([name, schema]) => parameter(name, 'path', schema)),
    ...Object.entries((spec.query?.properties ?? {}) as Record<string, JsonSchema>).map(([name, schema]) => parameter(name, 'query', schema)),
    ...(spec.headerParams ?? []),
    ...(spec.body ? [{ $ref: '#/components/parameters/ContentEncoding' }] : []),
    ...(credentials === 'key' ? [{ $ref: '#/components/parameters/ApiVersion' }] : []),
    { $ref: '#/components/parameters/RequestId' },
  ];
  const responses: Record<string, JsonSchema> = {};
  for (const answer of [spec.success, ...(spec.otherAnswers ?? [])]) {
    const headers = { ...(rateLimited ? authenticatedHeaders() : publicHeaders()), ...(credentials === 'key' ? { 'Api-Version': header('Api-Version') } : {}), ...answer.headers };
    const described: JsonSchema = { description: answer.description, headers };
    if (answer.schema) described.content = { 'application/json': { schema: answer.schema } };
    responses[String(answer.status)] = described;
  }
  const errors = [...new Set([...TRANSPORT_ERRORS, ...callerErrors(spec, credentials), ...(spec.body ? BODY_ERRORS : []), ...spec.errors])];
  const security = isPublic ? [] : credentials === 'key' ? [{ bearerAuth: spec.access === null ? [] : [spec.access] }] : [{ cookieAuth: [] }];
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [spec.tag],
    security,
    ...(credentials === 'session' && spec.access === 'admin' ? { 'x-required-role': 'admin' } : {}),
    parameters,
    ...(spec.body ? { requestBody: { required: true, content: Object.fromEntries((spec.body.types ?? ['application/json']).map((type) => [type, { schema: spec.body?.ref ?? spec.body?.schema }])) } } : {}),
    responses: { ...responses, ...problems.for(errors, rateLimited) },
  };
}

/** `paths` of a document: every route of the API, grouped by path, in the order declared. */
export function pathsOf(api: Api, problems: ProblemResponses): Record<string, JsonSchema> {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of api.routes) (paths[route.path] ??= {})[route.method] = operation(route, problems, api.credentials);
  return paths;
}
