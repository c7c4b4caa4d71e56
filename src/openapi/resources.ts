import type { JsonSchema } from '../kernel/define.js';
import type { CompiledResource } from '../kernel/registry.js';
import { ref } from './operation.js';

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
