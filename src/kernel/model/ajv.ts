import type { Options, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

/** ISO 4217 codes in current use, as the runtime's ICU knows them (the same list Intl formats). */
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** Formats of our own, beside ajv-formats' standard ones. */
function addFormats(ajv: Ajv2020): Ajv2020 {
  formats.default(ajv);
  ajv.addFormat('currency', { type: 'string', validate: (code: string) => CURRENCIES.has(code) });
  return ajv;
}

/**
 * For plugins' own schemas (JSON Schema 2020-12, as in OpenAPI 3.1) and the request bodies
 * derived from them: strict, so a typo fails at boot; no coercion, so `"5"` is not a number.
 * Verbose, so an error carries its field's schema and examples (kernel/model/messages.ts).
 * `options` adjusts that for a caller with other needs.
 */
export function createSchemaAjv(options: Options = {}): Ajv2020 {
  return addFormats(new Ajv2020({ strict: true, allErrors: true, strictTypes: false, allowUnionTypes: true, verbose: true, ...options }));
}

/** For query strings: values arrive as text, so integers are coerced and defaults filled in. */
export function createQueryAjv(): Ajv2020 {
  return addFormats(new Ajv2020({ strict: true, allErrors: true, coerceTypes: true, useDefaults: true, allowUnionTypes: true, verbose: true }));
}

/**
 * A validator compiled on its first use rather than at import: compiling costs milliseconds
 * (the first one also compiles ajv's meta-schema), which a short command that never calls it
 * should not pay.
 */
export function compileOnUse(ajv: Ajv2020, schema: object): () => ValidateFunction {
  let validate: ValidateFunction | undefined;
  return () => (validate ??= ajv.compile(schema));
}

let onUse: Ajv2020 | undefined;

/**
 * A validator for each key (a resource), compiled from `schemaOf(key)` at its first use, all
 * with one schema ajv made at the first: for the checks the kernel runs on what plugin code
 * returns (an action's changes, a beforeWrite hook's row), which most resources never meet.
 */
export function validatorPerKey<K extends object>(schemaOf: (key: K) => object): (key: K) => ValidateFunction {
  const compiled = new WeakMap<K, ValidateFunction>();
  return (key) => {
    let validate = compiled.get(key);
    if (!validate) compiled.set(key, (validate = (onUse ??= createSchemaAjv()).compile(schemaOf(key))));
    return validate;
  };
}
