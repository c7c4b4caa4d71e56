import { ApiError } from '../../common/errors.js';
import { type HookContext, type Row, validatorPerKey } from '../model/index.js';
import type { CompiledResource } from '../registry/index.js';

/**
 * A plugin's hooks, run inside the write's transaction (a throw rolls it back: 500, nothing
 * written). They may run again when the transaction is retried after a deadlock, so they must
 * touch nothing but the values they are given.
 */

/**
 * Runs `validate`: its problems answer 422 validation_failed, each with its pointer. What is not
 * a list of `{ pointer, detail }` (a JSON pointer, a sentence) is the plugin's bug, a 500 whose
 * log says so: a client was shown a pointer `label` or a message `undefined`.
 */
export async function runValidate(resource: CompiledResource, input: Row, before: Row | undefined, ctx: HookContext): Promise<void> {
  const validate = resource.def.validate;
  if (!validate) return;
  const returned: unknown = (await validate({ input, before, ctx })) ?? [];
  const name = `${resource.def.name} validate`;
  if (!Array.isArray(returned)) throw new Error(`${name} returned ${JSON.stringify(returned)}, not a list of problems ([{ pointer, detail }])`);
  const errors = (returned as Array<{ pointer?: unknown; detail?: unknown } | null>).map((p) => {
    const pointer = p?.pointer;
    const detail = p?.detail;
    if (typeof pointer !== 'string' || (pointer !== '' && !pointer.startsWith('/'))) throw new Error(`${name} returned a problem whose pointer ${JSON.stringify(pointer)} is not a JSON pointer, such as "/title"`);
    if (typeof detail !== 'string' || detail.trim() === '') throw new Error(`${name} returned a problem at ${JSON.stringify(pointer)} without its detail, the sentence a client reads`);
    return { pointer, message: detail };
  });
  if (errors.length === 0) return;
  throw new ApiError('validation_failed', `The body is not valid: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
}

/**
 * Runs `beforeWrite` over the object about to be stored: the fields it set, as clients send
 * them (the kernel's own, id and times, stay the kernel's). Without the hook, the object as it is.
 */
export async function runBeforeWrite(resource: CompiledResource, object: Row, before: Row | undefined, ctx: HookContext): Promise<Row> {
  const beforeWrite = resource.def.beforeWrite;
  if (!beforeWrite) return object;
  const returned = await beforeWrite({ row: { ...object }, before, ctx });
  if (typeof returned !== 'object' || returned === null) throw new Error(`${resource.def.name} beforeWrite returned ${String(returned)}, not the row`);
  const result: Row = { ...object };
  for (const field of Object.keys(resource.def.fields)) if (field in returned) result[field] = returned[field] ?? null;
  // What the hook set is held to its fields' kinds, as a body is: else a 201 would hold a value
  // the document refuses (a 300-character title on SQLite), or a backend's error (MySQL, PostgreSQL).
  const check = objectCheck(resource);
  if (!check(result)) {
    const problems = (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is not valid'}`);
    throw new Error(`${resource.def.name} beforeWrite returned a row its fields do not take: ${problems.join('; ')}`);
  }
  return result;
}

/** The check of a whole object against the resource's schema, compiled at its first hooked write. */
const objectCheck = validatorPerKey((resource: CompiledResource) => resource.objectSchema);
