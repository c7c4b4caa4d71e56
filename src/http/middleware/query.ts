import type { ValidateFunction } from 'ajv';
import { ApiError, type ErrorItem } from '../../common/errors.js';
import type { Ctx } from './context.js';
import { NUL, NUL_MESSAGE } from '../../common/wire.js';
import { valueMessage } from '../../kernel/model/index.js';
import { filteredFields, offeredOperators } from '../../kernel/query/index.js';

/** `field[op]`: the field and the operator a parameter names, if it names one (`a[b][c]` names `a`, and `b][c` as its operator). */
const OPERATOR_PARAMETER = /^([^[\]]+)\[(.*)\]$/;

/** What a list offers on a field, said beside any problem with one of its operator parameters. */
function offered(properties: Readonly<Record<string, unknown>>, name: string): string {
  const field = OPERATOR_PARAMETER.exec(name)?.[1];
  if (field === undefined || (isList(field) && field in properties)) return '';
  const operators = offeredOperators(properties, field);
  if (operators.length > 0) return `; ${field} offers ${operators.map((o) => (o === 'eq' ? `${field}=` : `${field}[${o}]`)).join(', ')}`;
  const fields = filteredFields(properties);
  return fields.length === 0 ? '; it offers no field[operator] parameters' : `; it filters on ${fields.join(', ')}`;
}

/**
 * The parameters that take several values (`expand`, `field[in]`): comma-separated in one, as
 * their descriptions say. Written as clients of other APIs write lists (`expand[]=a&expand[]=b`,
 * `expand=a&expand=b`), they are told how to write them here.
 */
const isList = (name: string) => name === 'expand' || name.endsWith('[in]');

function listHint(properties: Readonly<Record<string, unknown>>, name: string): string {
  const examples = (properties[name] as { examples?: unknown[] } | undefined)?.examples;
  const example = typeof examples?.[0] === 'string' ? examples[0] : 'a,b';
  return `give its values comma-separated in one parameter, such as ${name}=${example}`;
}

/** Why a parameter `field[...]` that the schema does not have is refused (what it offers follows: see offered). */
function unknownOperator(properties: Readonly<Record<string, unknown>>, field: string, operator: string): string {
  if (operator === '' && isList(field) && field in properties) return `is not how ${field} is written: ${listHint(properties, field)}`;
  if (offeredOperators(properties, field).length === 0) return `this endpoint does not filter on ${field}`;
  if (operator === '') return `${field}[] names no operator`;
  if (/[[\]]/.test(operator)) return `${field} takes one operator in brackets, not [${operator}]`;
  return `${field} does not offer the operator ${JSON.stringify(operator)}`;
}

function items(validate: ValidateFunction, properties: Readonly<Record<string, unknown>>): ErrorItem[] {
  return (validate.errors ?? []).map((e) => {
    if (e.keyword === 'additionalProperties') {
      const name = String((e.params as { additionalProperty: string }).additionalProperty);
      const operator = OPERATOR_PARAMETER.exec(name);
      if (operator) return { parameter: name, message: unknownOperator(properties, operator[1]!, operator[2]!) };
      return { parameter: name, message: 'is not a parameter of this endpoint' };
    }
    const name = e.instancePath.replace(/^\//, '').split('/')[0] ?? '';
    if (e.keyword === 'type' && name) {
      const type = String((e.params as { type: string }).type);
      return { parameter: name, message: type === 'boolean' ? 'must be true or false, given once' : `must be a single ${type}${isList(name) ? `: ${listHint(properties, name)}` : ''}` };
    }
    // In a query string a + reads as a space: an offset such as +01:00 must be sent as %2B01:00.
    const plus = e.keyword === 'format' && (e.params as { format: string }).format === 'date-time' ? '; in a URL write + as %2B' : '';
    return { parameter: name, message: `${valueMessage(e)}${plus}` };
  });
}

/** The most digits an integer parameter takes: every such number is exact in a double. */
const MAX_DIGITS = 15;
/** A plain decimal integer: no sign but `-`, no exponent, no hex, no spaces, no Infinity. */
const PLAIN_INTEGER = new RegExp(`^-?[0-9]{1,${MAX_DIGITS}}$`);

interface IntegerParameter {
  minimum: number;
  maximum: number;
  message: string;
}

/** The integer parameters of a query schema, with the range they allow. */
function integerParameters(schema: unknown): Map<string, IntegerParameter> {
  const properties = (schema as { properties?: Record<string, { type?: unknown; minimum?: number; maximum?: number }> }).properties ?? {};
  const found = new Map<string, IntegerParameter>();
  for (const [name, p] of Object.entries(properties)) {
    if (p.type !== 'integer') continue;
    const minimum = p.minimum ?? Number.MIN_SAFE_INTEGER;
    const maximum = p.maximum ?? Number.MAX_SAFE_INTEGER;
    const range = p.minimum !== undefined && p.maximum !== undefined ? ` from ${minimum} to ${maximum}` : ` of at most ${MAX_DIGITS} digits`;
    found.set(name, { minimum, maximum, message: `must be a plain decimal integer${range}, such as ${Math.min(Math.max(1, minimum), maximum)}` });
  }
  return found;
}

/**
 * Checks the query string against the route's schema (compiled once, at boot). ajv's coercion
 * would read `Infinity`, `1e400`, `0x10`, ` 5` or `+5` as numbers, so integer parameters must
 * first be plain decimal digits.
 */
export function validateQuery(validate: ValidateFunction) {
  const integers = integerParameters(validate.schema);
  return (ctx: Ctx): void => {
    // Copied key by key into a plain object: the validator read a spread copy of the parser's
    // null-prototype object about eight times slower (25 us a request, measured in the server).
    const query: Record<string, unknown> = {};
    const parsed = ctx.query;
    for (const name in parsed) query[name] = parsed[name];
    const bad = new Map<string, ErrorItem>();
    // %00 is how a query string carries U+0000 (the parser refuses it raw), so only then is each value looked at.
    if (ctx.querystring.includes('%00')) {
      for (const name in query) {
        const value = query[name];
        if ((Array.isArray(value) ? value : [value]).some((v) => typeof v === 'string' && v.includes(NUL)) || name.includes(NUL)) {
          bad.set(name, { parameter: name, message: NUL_MESSAGE });
          delete query[name];
        }
      }
    }
    for (const [name, { minimum, maximum, message }] of integers) {
      const value = query[name];
      if (typeof value === 'string' && (!PLAIN_INTEGER.test(value) || Number(value) < minimum || Number(value) > maximum)) {
        bad.set(name, { parameter: name, message });
        delete query[name];
      }
    }
    if (!validate(query) || bad.size > 0) {
      const properties = (validate.schema as { properties?: Record<string, unknown> }).properties ?? {};
      // A problem with an operator parameter says what the list offers on that field.
      const errors = [...bad.values(), ...(validate.errors ? items(validate, properties) : []).filter((e) => !bad.has(e.parameter ?? ''))].map((e) => ({ ...e, message: `${e.message}${offered(properties, e.parameter ?? '')}` }));
      const names = [...new Set(errors.map((e) => e.parameter))].join(', ');
      throw new ApiError('invalid_parameter', `Invalid query parameter: ${names}.`, { errors });
    }
    ctx.state.query = query;
  };
}
