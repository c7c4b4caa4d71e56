import type { Knex } from 'knex';
import { ApiError } from '../errors.js';
import { authOf, type Ctx } from '../http/context.js';
import type { Row } from './define.js';
import type { CompiledResource } from './registry.js';
import { toObject } from './rows.js';

/** Another workspace's id answers exactly as an id that does not exist. */
export function getHandler(db: Knex, resource: CompiledResource) {
  const notFound = (id: string) => new ApiError('not_found', `No ${resource.def.name} with id ${id}.`);
  return async (ctx: Ctx) => {
    const id = String(ctx.params.id);
    if (!id.startsWith(resource.def.idPrefix) || id.length > 64) throw notFound(id);
    const row = (await db(resource.def.table)
      .first(resource.columns)
      .where({ workspace_id: authOf(ctx).workspace.id, id })) as Row | undefined;
    if (!row) throw notFound(id);
    ctx.body = toObject(resource, row);
  };
}
