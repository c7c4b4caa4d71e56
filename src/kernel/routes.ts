import type Router from '@koa/router';
import { ApiError } from '../errors.js';
import { jsonBody } from '../http/middleware/body.js';
import type { AppContext, AppState } from '../http/context.js';
import { validateQuery } from '../http/middleware/query.js';
import { requireScope } from '../http/middleware/scope.js';
import { createHandler } from './create.js';
import { deleteHandler } from './delete.js';
import { getHandler } from './get.js';
import { listHandler } from './list.js';
import type { Registry } from './registry.js';
import type { WriteDeps } from './writes.js';
import { updateHandler } from './update.js';

/** Mounts every plugin's routes from its declaration: scope check, then input check, then handler. */
export function mountResources(router: Router<AppState, AppContext>, registry: Registry, deps: WriteDeps): void {
  const { db } = deps;
  const noQuery = validateQuery(registry.validateEmptyQuery);
  for (const resource of registry.resources) {
    const { def } = resource;
    const read = requireScope(def.scopes.read);
    const write = requireScope(def.scopes.write);
    const readOnly = new Set(['id', 'created_at', 'updated_at', ...Object.keys(def.fields).filter((f) => def.fields[f]?.readOnly)]);
    const collection = `/v1${def.path}`;
    const item = `${collection}/:id`;
    router.get(collection, read, validateQuery(resource.validateListQuery), def.handlers?.list ?? listHandler(db, resource));
    router.post(collection, write, noQuery, jsonBody(resource.validateCreate, readOnly), def.handlers?.create ?? createHandler(deps, registry, resource));
    router.get(item, read, noQuery, def.handlers?.get ?? getHandler(db, resource));
    router.patch(item, write, noQuery, jsonBody(resource.validateUpdate, readOnly, new Set(def.required)), def.handlers?.update ?? updateHandler(deps, registry, resource));
    router.delete(item, write, noQuery, def.handlers?.delete ?? deleteHandler(deps, resource));
  }
  for (const reserved of registry.reserved) {
    router.all(`/v1${reserved.path}{/*rest}`, () => {
      throw new ApiError('not_implemented', `${reserved.path} is reserved and not implemented yet. ${reserved.description}`);
    });
  }
}
