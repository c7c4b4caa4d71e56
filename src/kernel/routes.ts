import type Router from '@koa/router';
import type { Knex } from 'knex';
import { ApiError } from '../errors.js';
import type { AppContext, AppState } from '../http/context.js';
import { validateQuery } from '../http/middleware/query.js';
import { requireScope } from '../http/middleware/scope.js';
import { getHandler } from './get.js';
import { listHandler } from './list.js';
import type { Registry } from './registry.js';

/** Mounts every plugin's routes from its declaration: scope check, then input check, then handler. */
export function mountResources(router: Router<AppState, AppContext>, registry: Registry, db: Knex): void {
  for (const resource of registry.resources) {
    const { def } = resource;
    const read = requireScope(def.scopes.read);
    router.get(`/v1${def.path}`, read, validateQuery(resource.validateListQuery), def.handlers?.list ?? listHandler(db, resource));
    router.get(`/v1${def.path}/:id`, read, validateQuery(registry.validateEmptyQuery), def.handlers?.get ?? getHandler(db, resource));
  }
  for (const reserved of registry.reserved) {
    router.all(`/v1${reserved.path}{/*rest}`, () => {
      throw new ApiError('not_implemented', `${reserved.path} is reserved and not implemented yet. ${reserved.description}`);
    });
  }
}
