import { writeTransaction } from '../db/tx.js';
import type { WriteDeps } from './writes.js';
import { findForUpdate } from './lookup.js';
import type { ResourceStore } from './store.js';
import { checkVersion, type Expected } from './versions.js';

/** Deletes an object (if it is at a version `expected` admits); its `deleted` event carries the object as it was. */
export async function deleteObject(deps: WriteDeps, store: ResourceStore, workspaceId: string, id: string, expected?: Expected): Promise<void> {
  const { db, clock, notifier } = deps;
  const now = clock.now();
  await writeTransaction(db, async (tx) => {
    const row = await findForUpdate(store, tx, workspaceId, id);
    checkVersion(expected, row.version);
    await store.remove(tx, workspaceId, row);
    await store.emit(tx, workspaceId, { before: store.toObject(row), after: null }, now);
  });
  notifier.notify();
}
