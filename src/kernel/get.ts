import type { Knex } from 'knex';
import { authOf, type Ctx } from '../http/context.js';
import type { Row } from './define.js';
import { notFound, plausibleId } from './lookup.js';
import type { CompiledResource } from './registry.js';
import { toObject } from './rows.js';

export function getHandler(db: Knex, resource: CompiledResource) {
  return async (ctx: Ctx) => {
    const id = String(ctx.params.id);
    if (!plausibleId(resource, id)) throw notFound(resource, id);
    const row = (await db(resource.def.table)
      .first(resource.columns)
      .where({ workspace_id: authOf(ctx).workspace.id, id })) as Row | undefined;
    if (!row) throw notFound(resource, id);
    ctx.body = toObject(resource, row);
  };
}
