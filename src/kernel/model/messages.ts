import type { ErrorObject } from 'ajv';
import type { ErrorItem } from '../../common/errors.js';
import { inWords } from '../../common/words.js';

/**
 * Validation messages that say what is expected, with an example, rather than the rule that
 * failed ("must match ^client_[0-9a-z]+$"). Shared by the body and the query checks.
 */

/** What each format expects, in words a client can act on. */
const FORMATS: Record<string, string> = {
  currency: 'must be a 3-letter ISO 4217 currency code in current use, such as EUR',
  date: 'must be a date written YYYY-MM-DD, such as 2026-12-31',
  'date-time': 'must be an RFC 3339 time with its offset, such as 2026-11-21T09:30:00Z or 2026-11-21T10:30:00+01:00',
  email: 'must be an email address, such as ada@example.com',
  uri: 'must be an absolute URL, such as https://hooks.example.com/workspace',
};

export function formatMessage(format: string): string {
  return FORMATS[format] ?? `must be a valid ${format}`;
}

/** The first example a schema gives, if any. */
function exampleOf(schema: unknown): unknown {
  const examples = (schema as { examples?: unknown[] } | undefined)?.examples;
  return Array.isArray(examples) ? examples[0] : undefined;
}

/** A pattern failed: say the form by example (an id such as client_8f2k...), then the pattern itself. */
export function patternMessage(error: ErrorObject): string {
  const schema = error.parentSchema as { format?: unknown } | undefined;
  if (typeof schema?.format === 'string' && FORMATS[schema.format]) return FORMATS[schema.format] as string;
  const pattern = String((error.params as { pattern: string }).pattern);
  const example = exampleOf(schema);
  return example === undefined ? `must match the pattern ${pattern}` : `must have the form of ${String(example)} (the pattern ${pattern})`;
}

/** A value of the wrong type: null for a required field says so; otherwise the type, with an example. */
export function typeMessage(error: ErrorObject, required: boolean): string {
  if (error.data === null) return required ? 'is required and cannot be null' : 'cannot be null';
  const type = String((error.params as { type: string }).type).replace(',', ' or ');
  const example = exampleOf(error.parentSchema);
  return `must be ${type}${example === undefined ? '' : `, such as ${JSON.stringify(example)}`}`;
}

/** A string too short (an empty one: "must not be empty") or too long, in characters. */
export function lengthMessage(error: ErrorObject): string {
  const limit = Number((error.params as { limit: number }).limit);
  if (error.keyword === 'maxLength') return `must be at most ${limit} characters long`;
  return limit === 1 ? 'must not be empty' : `must be at least ${limit} characters long`;
}

/** An array with too few or too many items: the range its schema allows, and how many it held. */
function itemsMessage(error: ErrorObject): string {
  const { minItems, maxItems } = error.parentSchema as { minItems?: number; maxItems?: number };
  const held = Array.isArray(error.data) ? `, not ${error.data.length}` : '';
  if (minItems !== undefined && maxItems !== undefined) return `must hold ${minItems} to ${maxItems} items${held}`;
  return `${minItems !== undefined ? `must hold at least ${minItems}` : `must hold at most ${maxItems}`} items${held}`;
}

function pointerOf(error: ErrorObject): string {
  if (error.keyword === 'required') return `${error.instancePath}/${String((error.params as { missingProperty: string }).missingProperty)}`;
  if (error.keyword === 'additionalProperties') return `${error.instancePath}/${String((error.params as { additionalProperty: string }).additionalProperty)}`;
  return error.instancePath;
}

/** The fields an object's schema takes, read-only ones aside, as a list to say ("title, amount and stage"). */
function fieldsOf(error: ErrorObject, readOnly: ReadonlySet<string>): string | undefined {
  const properties = (error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  const names = Object.keys(properties ?? {}).filter((name) => !readOnly.has(name));
  return names.length === 0 ? undefined : inWords(names);
}

function messageOf(error: ErrorObject, readOnly: ReadonlySet<string>, required: ReadonlySet<string>, unknownAtTop: string | undefined): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties': {
      if (readOnly.has(String(params.additionalProperty))) return 'is read-only: the service sets it';
      if (error.instancePath === '' && unknownAtTop !== undefined) return unknownAtTop;
      // The fields it does take: a typo (`titel`) is then plain to see.
      const fields = fieldsOf(error, readOnly);
      return fields === undefined ? 'is not a field this body takes' : `is not a field this body takes; it takes ${fields}`;
    }
    case 'minProperties': {
      const fields = fieldsOf(error, readOnly);
      return `must name at least one field to change${fields === undefined ? '' : `: ${fields}`}`;
    }
    case 'type':
      return error.instancePath === '' ? 'the body must be a JSON object' : typeMessage(error, required.has(error.instancePath.split('/').pop() ?? ''));
    default:
      return valueMessage(error);
  }
}

/**
 * What is wrong with one value, said the same way in a body and in a query string: one of an
 * enum, a format, a length, a pattern, a number of items, or else ajv's own words. Each place
 * says first what only it has (a body's missing or unknown fields, a query's parameters).
 */
export function valueMessage(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).filter((v) => v !== null).join(', ')}`;
    case 'format':
      return formatMessage(String(params.format));
    case 'minLength':
    case 'maxLength':
      return lengthMessage(error);
    case 'pattern':
      return patternMessage(error);
    case 'minItems':
    case 'maxItems':
      return itemsMessage(error);
    default:
      return error.message ?? 'is invalid';
  }
}

/**
 * A body's problems, one entry per field (a lower-case currency breaks both its pattern and its
 * format), each said for a person; `unknownAtTop` is what a member the schema does not know is
 * told at the body's top level (a batch's envelope is not the resource).
 */
export function bodyErrors(errors: readonly ErrorObject[], readOnly: ReadonlySet<string>, required: ReadonlySet<string>, unknownAtTop?: string): ErrorItem[] {
  const byPointer = new Map<string, ErrorItem>();
  for (const e of errors) {
    const pointer = pointerOf(e);
    if (!byPointer.has(pointer)) byPointer.set(pointer, { pointer, message: messageOf(e, readOnly, required, unknownAtTop) });
  }
  return [...byPointer.values()];
}
