import type { JsonSchema } from './define.js';

/** Reusable field schemas for plugins, so money and references read the same everywhere. */

export function text(maxLength: number, options: { required?: boolean; examples?: string[]; description?: string } = {}): JsonSchema {
  return {
    type: options.required ? 'string' : ['string', 'null'],
    minLength: options.required ? 1 : 0,
    maxLength,
    ...(options.description ? { description: options.description } : {}),
    ...(options.examples ? { examples: options.examples } : {}),
  };
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

/** The id of another resource of the same workspace. */
export function idRef(prefix: string, description: string): JsonSchema {
  return { type: ['string', 'null'], pattern: `^${prefix}[0-9a-z]+$`, maxLength: 64, description, examples: [`${prefix}8f2kq0w7m3ab`] };
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
