import type { ValidateFunction } from 'ajv';
import { ApiError, type ErrorItem } from '../../errors.js';
import type { Ctx } from '../context.js';

function items(validate: ValidateFunction): ErrorItem[] {
  return (validate.errors ?? []).map((e) => {
    if (e.keyword === 'additionalProperties') {
      const name = String((e.params as { additionalProperty: string }).additionalProperty);
      return { parameter: name, message: 'is not a parameter of this endpoint' };
    }
    const name = e.instancePath.replace(/^\//, '').split('/')[0] ?? '';
    if (e.keyword === 'type' && name) return { parameter: name, message: `must be a single ${String((e.params as { type: string }).type)}` };
    if (e.keyword === 'enum') return { parameter: name, message: `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` };
    return { parameter: name, message: e.message ?? 'is invalid' };
  });
}

/** Checks the query string against the route's schema (compiled once, at boot). */
export function validateQuery(validate: ValidateFunction) {
  return async (ctx: Ctx, next: () => Promise<unknown>) => {
    const query: Record<string, unknown> = { ...ctx.query };
    if (!validate(query)) {
      const errors = items(validate);
      const names = [...new Set(errors.map((e) => e.parameter))].join(', ');
      throw new ApiError('invalid_parameter', `Invalid query parameter: ${names}.`, { errors });
    }
    ctx.state.query = query;
    return next();
  };
}
