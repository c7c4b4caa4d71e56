import { transaction } from '../db/dialect.js';
import type { WriteDeps } from './writes.js';
import { eventsFor, writeEvents } from '../events/outbox.js';
import { authOf, type Ctx } from '../http/context.js';
import { findForUpdate } from './lookup.js';
import type { CompiledResource } from './registry.js';
import { toObject } from './rows.js';

/** DELETE: 204. The `deleted` event carries the object as it was. */
export function deleteHandler(deps: WriteDeps, resource: CompiledResource) {
  const { def } = resource;
  const { db, clock, notifier } = deps;
  return async (ctx: Ctx) => {
    const workspaceId = authOf(ctx).workspace.id;
    const now = clock.now();
    await transaction(db, async (trx) => {
      const row = await findForUpdate(trx, resource, workspaceId, String(ctx.params.id));
      await trx(def.table).where({ workspace_id: workspaceId, id: row.id }).delete();
      await writeEvents(trx, eventsFor(resource, workspaceId, { before: toObject(resource, row), after: null }, now));
    });
    notifier.notify();
    ctx.status = 204;
  };
}
