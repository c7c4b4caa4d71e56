import type { Field, JsonSchema } from './define.js';
import { kinds, mark, withKind } from './kinds.js';
import { unknownKeyOf } from '../../common/words.js';
import { idPattern } from '../../common/ids.js';

/** Reusable field schemas for plugins, so money and references read the same everywhere. */

/**
 * Marks on a field schema that the kernel reads and nothing else sees (non-enumerable symbol
 * keys: skipped by ajv, by JSON and by comparisons): the resource a reference names, and that a
 * field is required.
 */
export const REFERENCE = Symbol.for('workspace-api.reference');
export const REQUIRED = Symbol.for('workspace-api.required');
/** What a field declared the way of an earlier release should be written as now (boot warns, once). */
export const DEPRECATED = Symbol.for('workspace-api.deprecated');

/** The resource a field refers to, if it was declared with ref(). */
export function referenceOf(schema: JsonSchema | undefined): string | undefined {
  const target = (schema as Record<symbol, unknown> | undefined)?.[REFERENCE];
  return typeof target === 'string' ? target : undefined;
}

/** Why a field's declaration is deprecated, if it is: what to write instead. */
export function deprecationOf(schema: JsonSchema | undefined): string | undefined {
  const why = (schema as Record<symbol, unknown> | undefined)?.[DEPRECATED];
  return typeof why === 'string' ? why : undefined;
}

export function isRequired(schema: JsonSchema | undefined): boolean {
  return (schema as Record<symbol, unknown> | undefined)?.[REQUIRED] === true;
}


/** Marks a field required on create: `required: true` of text(), for any schema. */
export function required<T>(schema: Field<T>): Field<NonNullable<T>> {
  return mark(schema, REQUIRED, true);
}

export interface TextOptions {
  required?: boolean;
  /** Searched by the list's `q` (section 14). */
  searchable?: boolean;
  minLength?: number;
  pattern?: string;
  examples?: string[];
  description?: string;
}

/**
 * A helper's options are ones it knows: `text(200, { requird: true })` made an optional field
 * without a word. Thrown at the plugin's import, which names the plugin.
 */
function checkOptions(helper: string, options: object, known: Record<string, true>): void {
  const problem = unknownKeyOf(options, known, 'option');
  if (problem) throw new Error(`${helper}: ${problem}`);
}
const TEXT_OPTIONS: Record<keyof TextOptions, true> = { required: true, searchable: true, minLength: true, pattern: true, examples: true, description: true };
type EmailOptions = { required?: boolean; description?: string };
const EMAIL_OPTIONS: Record<keyof EmailOptions, true> = { required: true, description: true };
type IntegerOptions = { min?: number; max?: number; required?: boolean; description?: string; examples?: number[] };
const INTEGER_OPTIONS: Record<keyof IntegerOptions, true> = { min: true, max: true, required: true, description: true, examples: true };
type BooleanOptions = { default?: boolean; description?: string };
const BOOLEAN_OPTIONS: Record<keyof BooleanOptions, true> = { default: true, description: true };

export function text(maxLength: number, options: TextOptions & { required: true }): Field<string>;
export function text(maxLength: number, options?: TextOptions): Field<string | null>;
export function text(maxLength: number, options: TextOptions = {}): Field<string | null> {
  checkOptions(`text(${maxLength})`, options, TEXT_OPTIONS);
  const schema: JsonSchema = {
    type: options.required ? 'string' : ['string', 'null'],
    minLength: options.minLength ?? (options.required ? 1 : 0),
    maxLength,
    ...(options.pattern ? { pattern: options.pattern } : {}),
    ...(options.description ? { description: options.description } : {}),
    ...(options.examples ? { examples: options.examples } : {}),
  };
  const marked = withKind(schema, kinds.text(maxLength, !options.required, options.searchable ?? false));
  return options.required ? required(marked) : marked;
}

export function email(options: EmailOptions & { required: true }): Field<string>;
export function email(options?: EmailOptions): Field<string | null>;
export function email(options: EmailOptions = {}): Field<string | null> {
  checkOptions('email()', options, EMAIL_OPTIONS);
  const schema = withKind(
    { type: options.required ? 'string' : ['string', 'null'], format: 'email', maxLength: 254, ...(options.description ? { description: options.description } : {}), examples: ['ada@example.com'] },
    kinds.email(!options.required),
  );
  return options.required ? required(schema) : schema;
}

/** A whole number; 64-bit when its bounds go past 32 bits (or are not given). */
export function integer(options: IntegerOptions & { required: true }): Field<number>;
export function integer(options?: IntegerOptions): Field<number | null>;
export function integer(options: IntegerOptions = {}): Field<number | null> {
  checkOptions('integer()', options, INTEGER_OPTIONS);
  const schema: JsonSchema = {
    type: options.required ? 'integer' : ['integer', 'null'],
    ...(options.min !== undefined ? { minimum: options.min } : {}),
    ...(options.max !== undefined ? { maximum: options.max } : {}),
    ...(options.description ? { description: options.description } : {}),
    ...(options.examples ? { examples: options.examples } : {}),
  };
  const marked = withKind(schema, kinds.integer(!options.required, options.min, options.max));
  return options.required ? required(marked) : marked;
}

/** True or false; with a default, never null (a create that leaves it out gets the default). */
export function boolean(options: BooleanOptions & { default: boolean }): Field<boolean>;
export function boolean(options?: BooleanOptions): Field<boolean | null>;
export function boolean(options: BooleanOptions = {}): Field<boolean | null> {
  checkOptions('boolean()', options, BOOLEAN_OPTIONS);
  const nullable = options.default === undefined;
  return withKind(
    { type: nullable ? ['boolean', 'null'] : 'boolean', ...(nullable ? {} : { default: options.default }), ...(options.description ? { description: options.description } : {}) },
    kinds.boolean(nullable),
  );
}

/** Money is an integer amount in minor units plus an ISO 4217 currency code. */
export function money(): { amount: Field<number | null>; currency: Field<string | null> } {
  return {
    amount: withKind({ type: ['integer', 'null'], minimum: 0, maximum: 1e15, description: 'Amount in minor units (cents) of `currency`, which must be set with it.', examples: [125000] }, kinds.money()),
    currency: withKind({ type: ['string', 'null'], pattern: '^[A-Z]{3}$', format: 'currency', description: 'ISO 4217 currency code in current use.', examples: ['EUR'] }, kinds.currency()),
  };
}

/**
 * The id of another resource of the same workspace, by that resource's name: the kernel gives it
 * the resource's id pattern, checks at each write that the id names a row of the workspace, and
 * makes it a list filter.
 */
export function ref(resource: string, description: string): Field<string | null> {
  return mark(withKind({ type: ['string', 'null'], maxLength: 64, description }, kinds.ref()), REFERENCE, resource);
}

/**
 * The id of another resource by its prefix, as the first plugins declared a reference (beside
 * `references: { client_id: 'client' }`). Deprecated since 0.2.0, removed no sooner than 0.4.0:
 * ref('client', ...) names the resource once. It still works and boot warns once.
 */
export function idRef(prefix: string, description: string): Field<string | null> {
  const resource = prefix.replace(/_$/, '');
  return mark({ type: ['string', 'null'], pattern: idPattern(prefix), maxLength: 64, description }, DEPRECATED, `idRef('${prefix}', ...) is deprecated: declare the field with ref('${resource}', ...) from 'workspace-api/plugin', which names the resource once (and drop it from references)`);
}

export function date(description: string): Field<string | null> {
  return withKind({ type: ['string', 'null'], format: 'date', description, examples: ['2026-12-31'] }, kinds.date());
}

/**
 * A moment a client sets: RFC 3339 in (any offset), stored as epoch milliseconds, read back as
 * RFC 3339 UTC with milliseconds.
 */
export function datetime(description: string): Field<string | null> {
  return withKind({ type: ['string', 'null'], format: 'date-time', description, examples: ['2026-12-31T09:30:00.000Z'] }, kinds.datetime());
}

/** A moment set by the service (never by the client), stored as epoch milliseconds: datetime()'s read-only form. */
export function moment(description: string): Field<string | null> {
  return withKind({ type: ['string', 'null'], format: 'date-time', readOnly: true, description }, kinds.moment());
}

export function states<const V extends string>(values: readonly V[], initial: NoInfer<V>, description: string): Field<V> {
  return withKind({ type: 'string', enum: [...values], default: initial, description }, kinds.states(values));
}
