import { batchBodySchema, type JsonSchema } from '../kernel/model/index.js';
import type { CompiledResource } from '../kernel/registry/index.js';
import { ref } from './operation.js';
import { expandable } from '../kernel/query/index.js';
import { MAX_BATCH } from '../kernel/write/index.js';

/** `deal` -> `Deal`, `price_list` -> `PriceList`, `/price-lists` -> `PriceLists`. */
export function pascal(name: string): string {
  return name
    .replace(/^\//, '')
    .split(/[-_]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

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

/** The object's schema with what `expand` may add beside each reference: the referenced object, or null. */
function withExpansions(resource: CompiledResource): JsonSchema {
  const names = expandable(resource.def, resource.kinds);
  if (names.size === 0) return resource.objectSchema;
  const properties: Record<string, JsonSchema> = {};
  for (const [key, schema] of Object.entries(resource.objectSchema.properties as Record<string, JsonSchema>)) {
    properties[key] = schema;
    for (const [expanded, field] of names) {
      if (field !== key) continue;
      const target = resource.def.references[field] as string;
      properties[expanded] = { anyOf: [ref(pascal(target)), { type: 'null' }], description: `With \`expand=${expanded}\` only: the ${target} \`${field}\` names, null when there is none.` };
    }
  }
  return { ...resource.objectSchema, properties };
}

/** The schemas a resource contributes under components.schemas: the plugin's own, unchanged. */
export function resourceSchemas(resource: CompiledResource): Record<string, JsonSchema> {
  const name = pascal(resource.def.name);
  return {
    [name]: withExpansions(resource),
    [`${name}Create`]: resource.createBodySchema,
    [`${name}Update`]: resource.updateBodySchema,
    [`${name}List`]: pageSchema(ref(name), `A page of ${resource.def.path.slice(1)}.`),
    [`${name}BatchCreate`]: batchBodySchema(ref(`${name}Create`), MAX_BATCH),
    [`${name}Batch`]: { type: 'object', additionalProperties: false, required: ['data'], description: `The ${resource.def.path.slice(1)} created, in the order sent.`, properties: { data: { type: 'array', items: ref(name) } } },
  };
}
