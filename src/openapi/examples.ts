import { eventCatalog, TEST_EVENT, type EventInfo } from '../events/catalog.js';
import type { Registry } from '../kernel/registry/index.js';
import type { JsonSchema } from '../kernel/model/index.js';

/** The moment every generated example is dated: fixed, so the document is the same at every boot. */
const WHEN = '2026-11-23T09:30:00.000Z';

const FORMATS: Record<string, string> = { 'date-time': WHEN, date: '2026-12-31', email: 'ada@example.com', uri: 'https://example.com/hooks/workspace', currency: 'EUR' };

/** `^deal_[0-9a-z]+$` -> `deal_01jdx8q2m5t7v9`: an id of the kind the pattern names. */
function idFor(pattern: string): string | undefined {
  const prefix = /^\^([a-z]+_)\[/.exec(pattern)?.[1];
  if (prefix === undefined) return undefined;
  const candidate = `${prefix}01jdx8q2m5t7v9`;
  return new RegExp(pattern).test(candidate) ? candidate : undefined;
}

/**
 * One plausible value of a JSON schema, `$ref`s resolved against `schemas`
 * (`#/components/schemas/<Name>`): its own `examples[0]`, `const`, `default` or first enum
 * value when it has one, else one built from its type, format and pattern. Objects get their
 * required properties only, so an object of changes is `{}`. Stays valid against the schema
 * for the shapes this service's documents use (checked by Redocly and a unit test).
 */
export function exampleOf(schema: JsonSchema, schemas: Record<string, JsonSchema>, depth = 0): unknown {
  if (depth > 12) return null;
  const $ref = schema.$ref as string | undefined;
  if ($ref !== undefined) return exampleOf(schemas[$ref.replace('#/components/schemas/', '')] ?? {}, schemas, depth + 1);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum.includes(null) ? null : schema.enum[0];
  const choices = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (choices) return exampleOf(choices.find((c) => c.type !== 'null') ?? choices[0] ?? {}, schemas, depth + 1);
  const types = ([] as unknown[]).concat(schema.type ?? 'object');
  // An optional value is shown as absent: `paid_at: null`, `disabled_reason: null`.
  const type = types.length > 1 && types.includes('null') ? 'null' : types[0];
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(required.map((name) => [name, exampleOf(properties[name] ?? {}, schemas, depth + 1)]));
    }
    case 'array':
      return (schema.minItems as number | undefined) === 0 || schema.items === undefined ? [] : [exampleOf(schema.items as JsonSchema, schemas, depth + 1)];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1;
    case 'boolean':
      return true;
    case 'string': {
      const format = FORMATS[schema.format as string];
      if (format !== undefined) return format;
      if (typeof schema.pattern === 'string') return idFor(schema.pattern) ?? '';
      return 'text';
    }
    default:
      return null;
  }
}

/** `value[k1][k2]...`, or undefined where a step is missing. */
function at(value: unknown, ...keys: string[]): unknown {
  let here = value;
  for (const key of keys) here = here !== null && typeof here === 'object' ? (here as Record<string, unknown>)[key] : undefined;
  return here;
}

/**
 * The extension that carries a webhook's example payload. Not the media type's `example`: in a
 * webhook the payload is a request, where OpenAPI forbids the `readOnly` fields (`id`,
 * `created_at`, ...) that every delivered object has; a unit test holds it to the schema instead.
 */
export const EXAMPLE_EXTENSION = 'x-payload-example';

/** Each webhook with an example payload beside its schema (what the Developer page shows per event). */
export function withExamples(webhooks: Record<string, JsonSchema>, schemas: Record<string, JsonSchema>): Record<string, JsonSchema> {
  for (const webhook of Object.values(webhooks)) {
    const operation = webhook.post as JsonSchema;
    const schema = at(operation, 'requestBody', 'content', 'application/json', 'schema') as JsonSchema | undefined;
    if (schema) operation[EXAMPLE_EXTENSION] = exampleOf(schema, schemas);
  }
  return webhooks;
}

/** An event's example payload as the public document gives it, or null when it gives none. */
export function eventExample(document: JsonSchema, event: string): unknown {
  return at(document, 'webhooks', event, 'post', EXAMPLE_EXTENSION) ?? null;
}

/** The event catalog (and `webhook.test`), each event with the example payload `document` gives it. */
export function eventCatalogWithExamples(registry: Registry, document: JsonSchema): Array<EventInfo & { example: unknown }> {
  return [...eventCatalog(registry), TEST_EVENT].map((e) => ({ ...e, example: eventExample(document, e.name) }));
}
