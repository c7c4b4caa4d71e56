import { transaction } from '../db/dialect.js';
import type { WriteDeps } from './writes.js';
import { eventsFor, writeEvents } from './outbox.js';
import { findForUpdate } from './lookup.js';
import type { CompiledResource } from './registry.js';
import { toObject } from './rows.js';

/** Deletes an object; its `deleted` event carries the object as it was. */
export async function deleteObject(deps: WriteDeps, resource: CompiledResource, workspaceId: string, id: string): Promise<void> {
  const { def } = resource;
  const { db, clock, notifier } = deps;
  const now = clock.now();
  await transaction(db, async (trx) => {
    const row = await findForUpdate(trx, resource, workspaceId, id);
    await trx(def.table).where({ workspace_id: workspaceId, id: row.id }).delete();
    await writeEvents(trx, eventsFor(resource, workspaceId, { before: toObject(resource, row), after: null }, now));
  });
  notifier.notify();
}
