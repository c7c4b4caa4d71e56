import { writeTransaction } from '../db/tx.js';
import type { WriteDeps } from './writes.js';
import { eventsFor, writeEvents } from './outbox.js';
import { findForUpdate } from './lookup.js';
import type { CompiledResource } from './registry.js';
import { toObject } from './rows.js';
import { deleteStatement } from './statements.js';

/** Deletes an object; its `deleted` event carries the object as it was. */
export async function deleteObject(deps: WriteDeps, resource: CompiledResource, workspaceId: string, id: string): Promise<void> {
  const { db, clock, notifier } = deps;
  const now = clock.now();
  await writeTransaction(db, async (tx) => {
    const row = await findForUpdate(db, tx, resource, workspaceId, id);
    await tx.run(deleteStatement(db, resource).sql, [workspaceId, row.id]);
    await writeEvents(db, tx, eventsFor(resource, workspaceId, { before: toObject(resource, row), after: null }, now));
  });
  notifier.notify();
}
