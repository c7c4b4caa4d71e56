import type { JsonSchema } from './define.js';

/** Reusable field schemas for plugins, so money and references read the same everywhere. */

/**
 * Marks on a field schema that the kernel reads and nothing else sees (non-enumerable symbol
 * keys: skipped by ajv, by JSON and by comparisons): the resource a reference names, and that a
 * field is required.
 */
export const REFERENCE = Symbol.for('workspace-api.reference');
export const REQUIRED = Symbol.for('workspace-api.required');

/** The resource a field refers to, if it was declared with ref(). */
export function referenceOf(schema: JsonSchema | undefined): string | undefined {
  const target = (schema as Record<symbol, unknown> | undefined)?.[REFERENCE];
  return typeof target === 'string' ? target : undefined;
}

export function isRequired(schema: JsonSchema | undefined): boolean {
  return (schema as Record<symbol, unknown> | undefined)?.[REQUIRED] === true;
}

function mark(schema: JsonSchema, key: symbol, value: unknown): JsonSchema {
  return Object.defineProperty({ ...schema }, key, { value, enumerable: false });
}

/** Marks a field required on create: `required: true` of text(), for any schema. */
export function required(schema: JsonSchema): JsonSchema {
  return mark(schema, REQUIRED, true);
}

export function text(maxLength: number, options: { required?: boolean; examples?: string[]; description?: string } = {}): JsonSchema {
  const schema: JsonSchema = {
    type: options.required ? 'string' : ['string', 'null'],
    minLength: options.required ? 1 : 0,
    maxLength,
    ...(options.description ? { description: options.description } : {}),
    ...(options.examples ? { examples: options.examples } : {}),
  };
  return options.required ? required(schema) : schema;
}

export function email(): JsonSchema {
  return { type: ['string', 'null'], format: 'email', maxLength: 254, examples: ['ada@example.com'] };
}

/** Money is an integer amount in minor units plus an ISO 4217 currency code. */
export function money(): { amount: JsonSchema; currency: JsonSchema } {
  return {
    amount: { type: ['integer', 'null'], minimum: 0, maximum: 1e15, description: 'Amount in minor units (cents).', examples: [125000] },
    currency: { type: ['string', 'null'], pattern: '^[A-Z]{3}$', format: 'currency', description: 'ISO 4217 currency code in current use.', examples: ['EUR'] },
  };
}

/**
 * The id of another resource of the same workspace, by that resource's name: the kernel gives it
 * the resource's id pattern, checks at each write that the id names a row of the workspace, and
 * makes it a list filter.
 */
export function ref(resource: string, description: string): JsonSchema {
  return mark({ type: ['string', 'null'], maxLength: 64, description }, REFERENCE, resource);
}

export function date(description: string): JsonSchema {
  return { type: ['string', 'null'], format: 'date', description, examples: ['2026-12-31'] };
}

/** A moment set by the service (never by the client), stored as epoch milliseconds. */
export function moment(description: string): JsonSchema {
  return { type: ['string', 'null'], format: 'date-time', readOnly: true, description };
}

export function states(values: readonly string[], initial: string, description: string): JsonSchema {
  return { type: 'string', enum: [...values], default: initial, description };
}
