import type Router from '@koa/router';
import type { Registry } from '../../kernel/registry.js';
import type { AppContext, AppState, Ctx } from '../context.js';
import { validateQuery } from '../middleware/query.js';

/** Served without a token (the authenticate middleware lets it through). */
export const OPENAPI_PATH = '/v1/openapi.json';

/** The document is serialised once, at boot; every request gets the same bytes. */
export function mountOpenApi(router: Router<AppState, AppContext>, registry: Registry, document: object): void {
  const body = JSON.stringify(document);
  router.get(OPENAPI_PATH, validateQuery(registry.validateEmptyQuery), (ctx: Ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = body;
  });
}
