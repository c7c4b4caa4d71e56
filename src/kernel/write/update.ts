import { writeTransaction, type Tx } from '../../db/tx.js';
import type { WriteDeps } from '../../deps.js';
import { checkMoney, type Row } from '../model/index.js';
import { findForUpdate } from '../query/index.js';
import { runBeforeWrite, runValidate } from './hooks.js';
import { pickFields, type ResourceStore } from '../storage/index.js';
import { checkTransition, stampsFor } from './state.js';
import { checkReferences, checkVersion, type Expected } from './checks.js';

/** The values that differ from the object's, as stored. */
function changedValues(store: ResourceStore, before: Row, values: Row): Row {
  const changes: Row = {};
  for (const [field, value] of Object.entries(store.toStored(values))) {
    const fieldKind = store.resource.kinds[field];
    if (before[field] !== (fieldKind ? fieldKind.decode(value) : value)) changes[field] = value;
  }
  return changes;
}

/** What applyUpdate() did: the row as it now stands (stored), and the object before and after. */
export interface Applied {
  row: Row;
  before: Row;
  after: Row;
  wrote: boolean;
}

/**
 * Changes a row already locked in `tx`, as a PATCH does: the state machine, the plugin's hooks,
 * the references, the stamps, one UPDATE and the events. Only fields whose value differs are
 * written; a body that changes nothing writes nothing and emits no event.
 */
export async function applyUpdate(store: ResourceStore, tx: Tx, workspaceId: string, row: Row, body: Row, now: number): Promise<Applied> {
  const { resource } = store;
  const { def } = resource;
  const before = store.toObject(row, workspaceId);
  checkTransition(resource, before, body);
  checkMoney(resource.money, body, before);
  const ctx = def.validate || def.beforeWrite ? { workspaceId, now: new Date(now) } : undefined;
  if (ctx) await runValidate(resource, body, before, ctx);
  // As stored; compared as clients read them back (a stored boolean is 0 or 1, and
  // 10:00+01:00 is the 09:00:00.000Z already there).
  let changes = changedValues(store, before, body);
  if (ctx && def.beforeWrite) {
    const proposed = await runBeforeWrite(resource, store.toObject({ ...row, ...changes }, workspaceId), before, ctx);
    changes = changedValues(store, before, pickFields(resource, proposed));
  }
  if (Object.keys(changes).length === 0) return { row, before, after: before, wrote: false };

  await checkReferences(store, tx, workspaceId, changes);
  if (def.state) Object.assign(changes, stampsFor(resource, row[def.state.field], changes[def.state.field], now));
  changes.updated_at = now;
  changes.version = Number(row.version) + 1;
  const stored = { ...row, ...changes };
  // Every field is written (those unchanged with the value just read, locked): one statement per resource.
  await store.update(tx, workspaceId, stored, row);
  const after = store.toObject(stored, workspaceId);
  await store.emit(tx, workspaceId, { before, after }, now);
  return { row: stored, before, after, wrote: true };
}

/** Changes an object (if it is at a version `expected` admits: kernel/write/checks.ts): the object after the change. */
export async function updateObject(deps: WriteDeps, store: ResourceStore, workspaceId: string, id: string, body: Row, expected?: Expected): Promise<Row> {
  const { db, clock, notifier } = deps;
  const now = clock.now();
  let wrote = false;
  const object = await writeTransaction(db, async (tx) => {
    const row = await findForUpdate(store, tx, workspaceId, id);
    checkVersion(expected, row.version);
    const applied = await applyUpdate(store, tx, workspaceId, row, body, now);
    wrote = applied.wrote;
    return applied.after;
  });
  if (wrote) notifier.notify();
  return object;
}

/** Deletes an object (if it is at a version `expected` admits); its `deleted` event carries the object as it was. */
export async function deleteObject(deps: WriteDeps, store: ResourceStore, workspaceId: string, id: string, expected?: Expected): Promise<void> {
  const { db, clock, notifier } = deps;
  const now = clock.now();
  await writeTransaction(db, async (tx) => {
    const row = await findForUpdate(store, tx, workspaceId, id);
    checkVersion(expected, row.version);
    await store.remove(tx, workspaceId, row);
    await store.emit(tx, workspaceId, { before: store.toObject(row, workspaceId), after: null }, now);
  });
  notifier.notify();
}
