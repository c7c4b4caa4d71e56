import { asBoolean, asNumber } from '../../db/decode.js';
import type { JsonSchema } from './define.js';
import { iso } from '../../db/iso.js';
import type { Column } from '../../db/tables.js';
import { epochMsOf } from '../../common/rfc3339.js';

/**
 * Field kinds: what a field is, said once. A kind owns the field's column (type, length,
 * nullability), its codec (the value as clients send and read it <-> as the database stores
 * it), the filter operators it offers and whether it can be searched, sorted or expanded. The
 * helpers of fields.ts mark each schema with its kind; a plain JSON Schema gets the kind that
 * fits it (kindOf), so a field is never stored one way and read another.
 */

export type KindName = 'text' | 'email' | 'integer' | 'money' | 'currency' | 'boolean' | 'date' | 'datetime' | 'moment' | 'states' | 'ref';
export type { Column };
export type FilterOperator = 'eq' | 'in' | 'gt' | 'gte' | 'lt' | 'lte';

export interface FieldKind {
  readonly name: KindName;
  readonly column: Column;
  /** A value as clients send it, as it is stored (and bound to a statement); null stays null. */
  encode(value: unknown): unknown;
  /** A stored value, as clients read it; null stays null. */
  decode(stored: unknown): unknown;
  /** True when encode and decode change nothing: the row is read as it is. */
  readonly plain: boolean;
  readonly operators: readonly FilterOperator[];
  readonly searchable: boolean;
  readonly sortable: boolean;
  readonly expandable: boolean;
  /**
   * Whether filters compare its values without regard to letter case (an email's): alike on
   * every backend, where MySQL's collation ignored case and PostgreSQL and SQLite did not.
   */
  readonly caseless: boolean;
}

const KIND = Symbol.for('workspace-api.kind');

const same = (value: unknown) => value ?? null;
const EQUALITY: readonly FilterOperator[] = ['eq', 'in'];
const RANGE: readonly FilterOperator[] = ['eq', 'gt', 'gte', 'lt', 'lte'];

/** An RFC 3339 time (checked by the schema first) as epoch milliseconds. */
function epochMs(value: unknown): number | null {
  if (value == null) return null;
  return epochMsOf(String(value));
}

function kind(name: KindName, column: Column, options: Partial<Pick<FieldKind, 'encode' | 'decode' | 'operators' | 'searchable' | 'sortable' | 'expandable' | 'caseless'>> = {}): FieldKind {
  const plain = options.encode === undefined && options.decode === undefined;
  return Object.freeze({
    name,
    column,
    encode: options.encode ?? same,
    decode: options.decode ?? same,
    plain,
    operators: options.operators ?? EQUALITY,
    searchable: options.searchable ?? false,
    sortable: options.sortable ?? false,
    expandable: options.expandable ?? false,
    caseless: options.caseless ?? false,
  });
}

const NUMBER = { encode: (v: unknown) => (v == null ? null : asNumber(v)), decode: (v: unknown) => (v == null ? null : asNumber(v)) };
const MOMENT = { encode: epochMs, decode: iso, operators: RANGE, sortable: true };

/** The kinds, built from the options a field helper was given. */
export const kinds = {
  text: (maxLength: number | undefined, nullable: boolean, searchable = false) =>
    kind('text', maxLength !== undefined && maxLength <= 255 ? { type: 'string', length: maxLength, nullable } : { type: 'text', ...(maxLength !== undefined ? { length: maxLength } : {}), nullable }, { searchable }),
  email: (nullable = true) => kind('email', { type: 'string', length: 254, nullable }, { searchable: true, caseless: true }),
  /** 64-bit when a bound passes 32 bits or is not given. */
  integer: (nullable: boolean, minimum: unknown, maximum: unknown) => {
    const wide = [minimum, maximum].some((bound) => typeof bound !== 'number' || Math.abs(bound) > 2 ** 31 - 1);
    return kind('integer', { type: wide ? 'bigInteger' : 'integer', nullable }, { ...NUMBER, operators: RANGE, sortable: true });
  },
  money: () => kind('money', { type: 'bigInteger', nullable: true }, { ...NUMBER, operators: RANGE, sortable: true }),
  currency: () => kind('currency', { type: 'string', length: 3, nullable: true }),
  boolean: (nullable: boolean) => kind('boolean', { type: 'boolean', nullable }, { encode: (v) => (v == null ? null : v === true || v === 1 || v === '1' ? 1 : 0), decode: asBoolean, operators: ['eq'] }),
  date: () => kind('date', { type: 'string', length: 10, nullable: true }, { operators: RANGE, sortable: true }),
  datetime: (nullable = true) => kind('datetime', { type: 'bigInteger', nullable }, MOMENT),
  moment: () => kind('moment', { type: 'bigInteger', nullable: true }, MOMENT),
  states: (values: readonly string[]) => kind('states', { type: 'string', length: Math.max(16, ...values.map((v) => v.length)), nullable: false }),
  ref: () => kind('ref', { type: 'string', length: 64, nullable: true }, { expandable: true }),
};

/**
 * A copy of the schema with a mark the kernel reads and nothing else sees: a non-enumerable
 * symbol key (ajv, JSON and comparisons skip it). The schema's other marks are kept.
 */
export function mark(schema: JsonSchema, key: symbol, value: unknown): JsonSchema {
  return Object.defineProperty(markedCopy(schema), key, { value, enumerable: false });
}

/** A shallow copy of the schema that keeps its marks. */
function markedCopy(schema: JsonSchema): JsonSchema {
  const copy: JsonSchema = { ...schema };
  for (const existing of Object.getOwnPropertySymbols(schema)) {
    Object.defineProperty(copy, existing, { value: (schema as Record<symbol, unknown>)[existing], enumerable: false });
  }
  return copy;
}

/**
 * The bounds of a whole number a body may send when its field declares none: what JSON carries
 * exactly (2^53 - 1) and a 64-bit column holds. Past them PostgreSQL and MySQL refused the
 * value with a 500, and SQLite kept a rounded float.
 */
export const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/** The schema, with the safe bounds where it is an integer's and declares none (marks kept). */
export function storable(schema: JsonSchema): JsonSchema {
  if (!typesOf(schema).includes('integer') || (typeof schema.minimum === 'number' && typeof schema.maximum === 'number')) return schema;
  const copy = markedCopy(schema);
  if (typeof copy.minimum !== 'number') copy.minimum = -SAFE_INTEGER;
  if (typeof copy.maximum !== 'number') copy.maximum = SAFE_INTEGER;
  return copy;
}

/** The schema, marked with its kind. */
export function withKind(schema: JsonSchema, fieldKind: FieldKind): JsonSchema {
  return mark(schema, KIND, fieldKind);
}

const typesOf = (schema: JsonSchema) => [schema.type].flat().filter((t): t is string => typeof t === 'string');

/**
 * The kind of a field: the one its helper marked, else the one its plain JSON Schema fits;
 * undefined when none does (an object, an array, a fractional number).
 */
export function kindOf(schema: JsonSchema): FieldKind | undefined {
  const marked = (schema as Record<symbol, unknown>)[KIND];
  if (marked) return marked as FieldKind;
  const types = typesOf(schema);
  const nullable = types.includes('null');
  const only = types.filter((t) => t !== 'null');
  if (only.length !== 1) return undefined;
  const [type] = only;
  if (type === 'string') {
    if (Array.isArray(schema.enum)) return kinds.states(schema.enum.map(String));
    if (schema.format === 'date-time') return schema.readOnly === true ? kinds.moment() : kinds.datetime(nullable);
    if (schema.format === 'date') return kinds.date();
    if (schema.format === 'email') return kinds.email(nullable);
    if (schema.format === 'currency') return kinds.currency();
    return kinds.text(typeof schema.maxLength === 'number' ? schema.maxLength : undefined, nullable);
  }
  if (type === 'integer') return kinds.integer(nullable, schema.minimum, schema.maximum);
  if (type === 'boolean') return kinds.boolean(nullable);
  return undefined;
}
