import { type FieldKind, type FilterOperator, type JsonSchema, kinds as kindsOf, type Resource } from '../model/index.js';

/**
 * The operators of a list (docs/reference.md section 14), derived from the fields' kinds: what a plugin
 * gets by declaring its fields. `field[gt|gte|lt|lte]=v` on integer, money, date and datetime
 * fields and on created_at and updated_at; `field[in]=a,b,c` (1-50 values) on states, refs,
 * email, and text declared filterable (list.filters); `field=v`, equality, on the declared
 * filters as before.
 */

/** The most values `field[in]` takes. */
export const MAX_IN_VALUES = 50;

export type RangeOperator = 'gt' | 'gte' | 'lt' | 'lte';
const RANGE_OPERATORS: readonly RangeOperator[] = ['gt', 'gte', 'lt', 'lte'];
export const SQL_OPERATOR: Readonly<Record<RangeOperator, string>> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** One operator parameter of a list: `amount[gte]`, `stage[in]`. */
export interface OperatorFilter {
  /** The query parameter (`amount[gte]`). */
  readonly parameter: string;
  readonly field: string;
  readonly operator: RangeOperator | 'in';
  /** Its schema in the list's query schema (one value; for `in`, the comma-separated list). */
  readonly schema: JsonSchema;
  /** A value as ajv left it (coerced), as it is stored and compared. */
  encode(value: unknown): unknown;
  /** `in` only: why one of the values cannot be one (undefined when it can). */
  refuse?(value: string): string | undefined;
}

/** The kernel's timestamps filter like a service-set moment. */
const TIMESTAMP = kindsOf.moment();

/** What a 32-bit integer column holds: a filter past it was a 500 on PostgreSQL (22003, out of range). */
const INT32 = { minimum: -(2 ** 31), maximum: 2 ** 31 - 1 };

const valueSchema = (fieldKind: FieldKind, description: string): JsonSchema => {
  if (fieldKind.name === 'integer' || fieldKind.name === 'money') return { type: 'integer', ...(fieldKind.column.type === 'integer' ? INT32 : {}), description };
  if (fieldKind.name === 'date') return { type: 'string', format: 'date', description, examples: ['2027-01-01'] };
  return { type: 'string', format: 'date-time', description: `${description} (RFC 3339; in a URL write + as %2B)`, examples: ['2026-11-21T09:30:00Z'] };
};

const WORDS: Readonly<Record<RangeOperator, string>> = { gt: 'greater than', gte: 'at least', lt: 'less than', lte: 'at most' };

/** Why a value cannot be one of the field's, by its schema's enum, pattern and length. */
function refusal(field: JsonSchema): (value: string) => string | undefined {
  const allowed = Array.isArray(field.enum) ? field.enum.filter((v): v is string => typeof v === 'string') : undefined;
  const pattern = typeof field.pattern === 'string' ? new RegExp(field.pattern, 'u') : undefined;
  const maxLength = typeof field.maxLength === 'number' ? field.maxLength : undefined;
  return (value) => {
    if (value === '') return 'has an empty value';
    if (allowed && !allowed.includes(value)) return `has ${JSON.stringify(value.slice(0, 100))}, not one of ${allowed.join(', ')}`;
    if (pattern && !pattern.test(value)) return `has ${JSON.stringify(value.slice(0, 100))}, which does not match ${field.pattern as string}`;
    if (maxLength !== undefined && [...value].length > maxLength) return `has a value longer than ${maxLength} characters`;
    return undefined;
  };
}

/** Whether `field[in]` is offered on a field of this kind (text only when declared filterable). */
function offersIn(fieldKind: FieldKind, declaredFilter: boolean): boolean {
  if (!fieldKind.operators.includes('in')) return false;
  return fieldKind.name === 'states' || fieldKind.name === 'ref' || fieldKind.name === 'email' || declaredFilter;
}

/** Every operator parameter of a resource's list, in field order, then created_at and updated_at. */
export function operatorFilters(resource: Resource, fieldKinds: Readonly<Record<string, FieldKind>>): OperatorFilter[] {
  const filters: OperatorFilter[] = [];
  const range = (field: string, fieldKind: FieldKind) => {
    for (const operator of RANGE_OPERATORS) {
      filters.push({ parameter: `${field}[${operator}]`, field, operator, schema: valueSchema(fieldKind, `Only objects whose ${field} is ${WORDS[operator]} this.`), encode: (v) => fieldKind.encode(v) });
    }
  };
  for (const [field, schema] of Object.entries(resource.fields)) {
    const fieldKind = fieldKinds[field];
    if (!fieldKind) continue;
    if (fieldKind.operators.includes('gt')) range(field, fieldKind);
    else if (offersIn(fieldKind, resource.list.filters.includes(field))) {
      filters.push({
        parameter: `${field}[in]`,
        field,
        operator: 'in',
        schema: { type: 'string', minLength: 1, description: `Only objects whose ${field} is one of these: 1 to ${MAX_IN_VALUES} values, comma-separated.`, ...(Array.isArray(schema.enum) ? { examples: [schema.enum.filter((v) => v !== null).slice(0, 2).join(',')] } : {}) },
        encode: (v) => fieldKind.encode(v),
        refuse: refusal(schema),
      });
    }
  }
  range('created_at', TIMESTAMP);
  range('updated_at', TIMESTAMP);
  return filters;
}

/** A query schema's parameter `field[op]`: the field and the operator. */
const OPERATOR_PROPERTY = /^(.+)\[(\w+)\]$/;

/** The parameters of `field[...]` a query schema offers, by field: what an unknown operator's answer lists. */
export function offeredOperators(properties: Readonly<Record<string, unknown>>, field: string): FilterOperator[] {
  const offered: FilterOperator[] = field in properties ? ['eq'] : [];
  for (const name of Object.keys(properties)) {
    const match = OPERATOR_PROPERTY.exec(name);
    if (match?.[1] === field) offered.push(match[2] as FilterOperator);
  }
  return offered;
}

/** The fields a query schema filters on with operators (`field[op]`), in order: what a filter on any other field is told. */
export function filteredFields(properties: Readonly<Record<string, unknown>>): string[] {
  return [...new Set(Object.keys(properties).flatMap((name) => OPERATOR_PROPERTY.exec(name)?.[1] ?? []))].sort();
}

/** The values of `field[in]`, or why they cannot be. */
export function inValues(filter: OperatorFilter, raw: string): { values: string[] } | { problem: string } {
  const values = raw.split(',');
  if (values.length > MAX_IN_VALUES) return { problem: `takes at most ${MAX_IN_VALUES} values, not ${values.length}` };
  for (const value of values) {
    const problem = filter.refuse?.(value);
    if (problem) return { problem };
  }
  return { values: [...new Set(values)] };
}
