import { writeTransaction } from '../db/tx.js';
import type { WriteDeps } from './writes.js';
import { eventsFor, writeEvents } from './outbox.js';
import type { Row } from './define.js';
import { findForUpdate } from './lookup.js';
import { checkReferences } from './references.js';
import type { CompiledResource, Registry } from './registry.js';
import { runBeforeWrite, runValidate } from './hooks.js';
import { pickFields, toObject, toStored } from './rows.js';
import { updateStatement, values } from './statements.js';
import { checkTransition, stampsFor } from './state.js';

/** The values that differ from the object's, as stored. */
function changedValues(resource: CompiledResource, before: Row, values: Row): Row {
  const changes: Row = {};
  for (const [field, value] of Object.entries(toStored(resource, values))) {
    const fieldKind = resource.kinds[field];
    if (before[field] !== (fieldKind ? fieldKind.decode(value) : value)) changes[field] = value;
  }
  return changes;
}

/**
 * Changes an object: the object after the change. Only fields whose value differs are written; a
 * body that changes nothing writes nothing and emits no event.
 */
export async function updateObject(deps: WriteDeps, registry: Registry, resource: CompiledResource, workspaceId: string, id: string, body: Row): Promise<Row> {
  const { def } = resource;
  const { db, clock, notifier } = deps;
  const now = clock.now();
  let wrote = false;
  const object = await writeTransaction(db, async (tx) => {
    const row = await findForUpdate(db, tx, resource, workspaceId, id);
    const before = toObject(resource, row);
    checkTransition(resource, before, body);
    const ctx = { workspaceId, now: new Date(now) };
    await runValidate(resource, body, before, ctx);
    // As stored; compared as clients read them back (a stored boolean is 0 or 1, and
    // 10:00+01:00 is the 09:00:00.000Z already there).
    let changes = changedValues(resource, before, body);
    if (def.beforeWrite) {
      const proposed = await runBeforeWrite(resource, toObject(resource, { ...row, ...changes }), before, ctx);
      changes = changedValues(resource, before, pickFields(resource, proposed));
    }
    if (Object.keys(changes).length === 0) return before;

    await checkReferences(db, tx, registry, resource, workspaceId, changes);
    if (def.state) Object.assign(changes, stampsFor(resource, row[def.state.field], changes[def.state.field], now));
    changes.updated_at = now;
    // Every field is written (those unchanged with the value just read, locked): one statement per resource.
    const update = updateStatement(db, resource);
    await tx.run(update.sql, values(update, { ...row, ...changes }, workspaceId, row.id));
    const after = toObject(resource, { ...row, ...changes });
    await writeEvents(db, tx, eventsFor(resource, workspaceId, { before, after }, now));
    wrote = true;
    return after;
  });
  if (wrote) notifier.notify();
  return object;
}
