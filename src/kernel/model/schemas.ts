import { objectKeys, typed, type ActionDeclaration, type JsonSchema, type Resource, type Row, type Typed } from './define.js';
import type { ListQuery, OperatorFilter } from '../query/index.js';
import { kindOf, storable } from './kinds.js';
import { isRequired } from './fields.js';
import { idPattern } from '../../common/ids.js';

export const MAX_PAGE = 200;
export const DEFAULT_PAGE = 50;

const timestamp = (description: string): JsonSchema => ({ type: 'string', format: 'date-time', readOnly: true, description });

/** The object as clients receive it: the plugin's fields plus the kernel's id and timestamps. */
export function objectSchema(resource: Resource): JsonSchema {
  const fields = Object.keys(resource.fields);
  return {
    type: 'object',
    description: resource.description,
    additionalProperties: false,
    required: objectKeys(fields),
    properties: {
      id: { type: 'string', pattern: idPattern(resource.idPrefix), readOnly: true },
      ...resource.fields,
      created_at: timestamp('When the object was created (RFC 3339, UTC, milliseconds).'),
      updated_at: timestamp('When the object last changed (RFC 3339, UTC, milliseconds).'),
      version: { type: 'integer', minimum: 1, readOnly: true, description: 'The object\'s version: 1 when created, one more with each change. GET answers it as the ETag; send it as If-Match to PATCH or DELETE only the version you read. Events carry it too, so a receiver can drop one older than what it has.' },
      livemode: { type: 'boolean', readOnly: true, description: 'true for an object of live mode, false for one made with a test key (`wsk_test_...`): the two never mix.' },
    },
  };
}

/** Without `null` and service-only keywords: the schema of one filter value. */
function filterSchema(name: string, field: JsonSchema): JsonSchema {
  if (kindOf(field)?.name === 'boolean') return { type: 'boolean', description: `Only objects whose ${name} is this: true or false.` };
  const schema: JsonSchema = { type: 'string' };
  if (Array.isArray(field.enum)) schema.enum = field.enum.filter((v) => v !== null);
  if (typeof field.pattern === 'string') schema.pattern = field.pattern;
  if (typeof field.maxLength === 'number') schema.maxLength = field.maxLength;
  if (Array.isArray(field.examples)) schema.examples = field.examples;
  return schema;
}

export function sortValues(resource: Resource, fieldSorts: readonly string[] = []): string[] {
  return [...resource.list.sorts, ...fieldSorts].flatMap((s) => [s, `-${s}`]);
}

/** The list endpoint's query string: anything not named here is refused. */
/** `limit` and `cursor`: the query parameters of every cursor list. */
export const PAGE_PARAMETERS = {
  limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE, description: 'Page size.' },
  cursor: { type: 'string', minLength: 1, maxLength: 2048, description: 'next_cursor of the previous page.' },
} as const satisfies Record<string, JsonSchema>;

export function listQuerySchema(resource: Resource, filters: readonly OperatorFilter[] = [], extra: Record<string, JsonSchema> = {}, fieldSorts: readonly string[] = []): Typed<ListQuery> {
  const properties: Record<string, JsonSchema> = {
    ...PAGE_PARAMETERS,
    sort: {
      type: 'string',
      enum: sortValues(resource, fieldSorts),
      default: '-created_at',
      description:
        fieldSorts.length === 0
          ? 'Order; a leading - sorts newest first.'
          : `Order; a leading - reverses it (\`-created_at\`: newest first). By a field (${fieldSorts.map((f) => `\`${f}\``).join(', ')}), objects without a value come last either way.`,
    },
    updated_since: { type: 'string', format: 'date-time', description: 'Only objects updated at or after this time (RFC 3339; in a URL write + as %2B).', examples: ['2026-11-21T09:30:00Z'] },
  };
  for (const filter of resource.list.filters) {
    const field = resource.fields[filter];
    if (field) properties[filter] = filterSchema(filter, field);
  }
  for (const filter of filters) properties[filter.parameter] = filter.schema;
  Object.assign(properties, extra);
  return typed({ type: 'object', additionalProperties: false, properties });
}

export const EMPTY_QUERY_SCHEMA: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };

/** Fields a client may send: everything but what the service sets (`readOnly`). */
export function writableFields(resource: Resource): string[] {
  return Object.keys(resource.fields).filter((f) => resource.fields[f]?.readOnly !== true);
}

/** The writable fields' schemas, each integer within the safe bounds when it declares none (kinds.ts storable). */
function bodyProperties(resource: Resource): Record<string, JsonSchema> {
  return Object.fromEntries(writableFields(resource).map((f) => [f, storable(resource.fields[f] as JsonSchema)]));
}

/** POST body: the writable fields, the declared required ones present, nothing else. */
export function createBodySchema(resource: Resource): Typed<Row> {
  return typed({ type: 'object', additionalProperties: false, required: [...resource.required], properties: bodyProperties(resource) });
}

/** PATCH body: any subset of the writable fields; a field sent as null is cleared. */
export function updateBodySchema(resource: Resource): Typed<Row> {
  return typed({ type: 'object', additionalProperties: false, properties: bodyProperties(resource) });
}

/**
 * An action's body: its declared properties, nothing else; required are those its fields mark
 * so (`text(200, { required: true })`, as in `fields`) and those it lists in `required`.
 */
export function actionBodySchema(action: ActionDeclaration): Typed<Row> {
  const body = action.body ?? {};
  const properties = Object.fromEntries(Object.entries(body).map(([name, schema]) => [name, storable(schema)]));
  const required = [...new Set([...Object.keys(body).filter((name) => isRequired(body[name])), ...(action.required ?? [])])];
  return typed({ type: 'object', additionalProperties: false, properties, ...(required.length > 0 ? { required } : {}) });
}

/** POST /<path>/batch: `{ "data": [...] }`, 1 to 100 create bodies. */
export function batchBodySchema(createBody: JsonSchema, max: number): Typed<{ data: Row[] }> {
  return typed({
    type: 'object',
    additionalProperties: false,
    required: ['data'],
    properties: { data: { type: 'array', minItems: 1, maxItems: max, items: createBody, description: `1 to ${max} objects to create, all or none.` } },
  });
}
