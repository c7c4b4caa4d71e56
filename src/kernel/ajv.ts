import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

/** For plugins' own schemas (JSON Schema 2020-12, as in OpenAPI 3.1): strict, so a typo fails at boot. */
export function createSchemaAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, strictTypes: false, allowUnionTypes: true });
  formats.default(ajv);
  return ajv;
}

/** For query strings: values arrive as text, so integers are coerced and defaults filled in. */
export function createQueryAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, coerceTypes: true, useDefaults: true, allowUnionTypes: true });
  formats.default(ajv);
  return ajv;
}
