import { JSON_TYPES } from '../http/middleware/body.js';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY } from '../kernel/idempotency.js';
import type { JsonSchema } from '../kernel/define.js';
import type { CompiledResource } from '../kernel/registry.js';
import { operation, ref, type OperationSpec } from './operation.js';
import { header, type ProblemResponses } from './problems.js';

/** `deal` -> `Deal`, `price_list` -> `PriceList`, `/price-lists` -> `PriceLists`. */
export function pascal(name: string): string {
  return name
    .replace(/^\//, '')
    .split(/[-_]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** `an invoice`, `a deal`. */
const a = (name: string) => `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}`;

/** The paginated list answer of any list endpoint. */
export function pageSchema(item: JsonSchema, description: string): JsonSchema {
  return {
    type: 'object',
    description,
    additionalProperties: false,
    required: ['data', 'has_more', 'next_cursor'],
    properties: {
      data: { type: 'array', items: item },
      has_more: { type: 'boolean', description: 'Whether another page follows.' },
      next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last page.' },
    },
  };
}

/** The schemas a resource contributes under components.schemas: the plugin's own, unchanged. */
export function resourceSchemas(resource: CompiledResource): Record<string, JsonSchema> {
  const name = pascal(resource.def.name);
  return {
    [name]: resource.objectSchema,
    [`${name}Create`]: resource.createBodySchema,
    [`${name}Update`]: resource.updateBodySchema,
    [`${name}List`]: pageSchema(ref(name), `A page of ${resource.def.path.slice(1)}.`),
  };
}

function machineText(resource: CompiledResource): string {
  const state = resource.def.state;
  if (!state) return '';
  if (state.transitions === 'free') return ` \`${state.field}\` moves freely between its values.`;
  const moves = Object.entries(state.transitions).map(([from, to]) => (to.length > 0 ? `${from} → ${to.join(' | ')}` : `${from} is final`));
  return ` \`${state.field}\` follows its state machine: ${moves.join('; ')}. A refused move is 409 \`invalid_transition\`.`;
}

/** Paths of one resource: list and create on the collection; get, update and delete on an item. */
export function resourcePaths(resource: CompiledResource, problems: ProblemResponses): Record<string, JsonSchema> {
  const op = (spec: OperationSpec) => operation(spec, problems);
  const { def } = resource;
  const name = pascal(def.name);
  const plural = pascal(def.path);
  const tag = def.path.slice(1);
  const id = { id: { type: 'string', description: `The ${def.name}'s id (\`${def.idPrefix}...\`).`, examples: [`${def.idPrefix}0123456789abcdef`] } };
  const idempotencyKey = {
    name: IDEMPOTENCY_HEADER,
    in: 'header',
    required: false,
    description: 'Makes the POST safe to retry: the same key with the same body within 24 h replays the first answer (with Idempotent-Replayed: true); with another body or endpoint, 409 idempotency_conflict.',
    schema: { type: 'string', pattern: IDEMPOTENCY_KEY.source },
  };
  const machine = def.state && def.state.transitions !== 'free' ? (['invalid_transition'] as const) : [];
  return {
    [def.path]: {
      get: op({
        operationId: `list${plural}`,
        summary: `List ${tag}`,
        description: `A page of ${tag}, newest first by default. Walk the pages with \`cursor\`; rows that exist for the whole walk appear exactly once. Unknown parameters are refused.`,
        tag,
        scope: def.scopes.read,
        query: resource.listQuerySchema,
        success: { status: 200, description: `A page of ${tag}.`, schema: ref(`${name}List`) },
        errors: ['invalid_parameter', 'invalid_cursor', 'insufficient_scope'],
      }),
      post: op({
        operationId: `create${name}`,
        summary: `Create ${a(def.name)}`,
        description: `Creates ${a(def.name)} and emits \`${def.name}.created\` in the same transaction. Unknown fields are refused.${machineText(resource)}`,
        tag,
        scope: def.scopes.write,
        headerParams: [idempotencyKey],
        body: ref(`${name}Create`),
        success: { status: 201, description: `The new ${def.name}.`, schema: ref(name), headers: { Location: header('Location'), 'Idempotent-Replayed': header('Idempotent-Replayed') } },
        errors: ['invalid_parameter', 'insufficient_scope', 'idempotency_conflict', ...machine],
      }),
    },
    [`${def.path}/{id}`]: {
      get: op({
        operationId: `get${name}`,
        summary: `Get ${a(def.name)}`,
        tag,
        scope: def.scopes.read,
        pathParams: id,
        success: { status: 200, description: `The ${def.name}.`, schema: ref(name) },
        errors: ['invalid_parameter', 'insufficient_scope', 'not_found'],
      }),
      patch: op({
        operationId: `update${name}`,
        summary: `Update ${a(def.name)}`,
        description: `Changes the fields sent (a field sent as null is cleared) and emits \`${def.name}.updated\` with the changed fields' old values in \`data.previous\`. A PATCH that changes nothing emits nothing.${machineText(resource)}`,
        tag,
        scope: def.scopes.write,
        pathParams: id,
        body: ref(`${name}Update`),
        bodyTypes: JSON_TYPES,
        success: { status: 200, description: `The ${def.name} after the change.`, schema: ref(name) },
        errors: ['invalid_parameter', 'insufficient_scope', 'not_found', ...machine],
      }),
      delete: op({
        operationId: `delete${name}`,
        summary: `Delete ${a(def.name)}`,
        description: `Deletes the ${def.name} and emits \`${def.name}.deleted\`.`,
        tag,
        scope: def.scopes.write,
        pathParams: id,
        success: { status: 204, description: 'Deleted.' },
        errors: ['invalid_parameter', 'insufficient_scope', 'not_found'],
      }),
    },
  };
}
