import type { ErrorCode } from '../errors.js';
import type { JsonSchema } from '../kernel/define.js';
import { AUTHENTICATED_ERRORS, TRANSPORT_ERRORS, authenticatedHeaders, publicHeaders, type ProblemResponses } from './problems.js';

export interface Success {
  status: number;
  description: string;
  /** The JSON body; none for 204. */
  schema?: JsonSchema;
  headers?: Record<string, JsonSchema>;
}

export interface OperationSpec {
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** The scope the key needs; `null`: any valid key; `'public'`: no token at all. */
  scope: string | null | 'public';
  /** Path parameters, by name. */
  pathParams?: Record<string, JsonSchema>;
  /** The query string's JSON Schema, as the route validates it; anything not in it is refused. */
  query?: JsonSchema;
  headerParams?: JsonSchema[];
  /** The JSON request body's schema (a $ref). */
  body?: JsonSchema;
  /** Media types the body may come as; default application/json. */
  bodyTypes?: readonly string[];
  /** None for a reserved path, which only ever answers 501. */
  success?: Success;
  /** What this operation can answer beyond the errors of every authenticated request. */
  errors: readonly ErrorCode[];
}

/** What reading a JSON body can answer (src/http/middleware/body.ts). */
const BODY_ERRORS: readonly ErrorCode[] = ['invalid_json', 'payload_too_large', 'unsupported_media_type', 'validation_failed'];

/** Refs name components; everything else in the document is built from the route's own schemas. */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** A path or query parameter, described by its schema's description. */
function parameter(name: string, location: 'path' | 'query', schema: JsonSchema): JsonSchema {
  return { name, in: location, required: location === 'path', ...(typeof schema.description === 'string' ? { description: schema.description } : {}), schema };
}

/** One OpenAPI operation object: parameters, body, the success answer and every error answer. */
export function operation(spec: OperationSpec, problems: ProblemResponses): JsonSchema {
  const isPublic = spec.scope === 'public';
  const parameters = [
    ...Object.entries(spec.pathParams ?? {}).map(([name, schema]) => parameter(name, 'path', schema)),
    ...Object.entries((spec.query?.properties ?? {}) as Record<string, JsonSchema>).map(([name, schema]) => parameter(name, 'query', schema)),
    ...(spec.headerParams ?? []),
    ...(spec.body ? [{ $ref: '#/components/parameters/ContentEncoding' }] : []),
    { $ref: '#/components/parameters/RequestId' },
  ];
  const responses: Record<string, JsonSchema> = {};
  if (spec.success) {
    const headers = { ...(isPublic ? publicHeaders() : authenticatedHeaders()), ...spec.success.headers };
    const success: JsonSchema = { description: spec.success.description, headers };
    if (spec.success.schema) success.content = { 'application/json': { schema: spec.success.schema } };
    responses[String(spec.success.status)] = success;
  }
  const errors = [...TRANSPORT_ERRORS, ...(isPublic ? [] : AUTHENTICATED_ERRORS), ...(spec.body ? BODY_ERRORS : []), ...spec.errors];
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [spec.tag],
    security: isPublic ? [] : [{ bearerAuth: spec.scope === null ? [] : [spec.scope] }],
    parameters,
    ...(spec.body ? { requestBody: { required: true, content: Object.fromEntries((spec.bodyTypes ?? ['application/json']).map((type) => [type, { schema: spec.body }])) } } : {}),
    responses: { ...responses, ...problems.for(errors, !isPublic) },
  };
}
