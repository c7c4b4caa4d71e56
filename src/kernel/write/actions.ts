import { writeTransaction } from '../../db/tx.js';
import { ApiError } from '../../common/errors.js';
import { bodyErrors, type Row, validatorPerKey } from '../model/index.js';
import { type Answer, AS_STORED, idempotently, type IdempotentRequest, remember, type Rendering } from './idempotency.js';
import { findForUpdate } from '../query/index.js';
import type { CompiledResource } from '../registry/index.js';
import type { ResourceStore } from '../storage/index.js';
import { applyUpdate } from './update.js';
import type { WriteDeps } from '../../deps.js';

const updateCheck = validatorPerKey((resource: CompiledResource) => resource.updateBodySchema);

/** Changes an action hands to update(), checked as a PATCH body is: 422 naming each field that is wrong. */
function checkChanges(resource: CompiledResource, changes: Row): void {
  const check = updateCheck(resource);
  if (check(changes)) return;
  const { def } = resource;
  const errors = bodyErrors(check.errors ?? [], new Set(Object.keys(def.fields).filter((f) => def.fields[f]?.readOnly)), new Set(def.required));
  throw new ApiError('validation_failed', `The action's changes are not valid: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
}

/**
 * Runs a plugin's action on one object: 200 with the object as it then stands. The object is
 * locked for the whole of `handle`; its updates, their events and (with an Idempotency-Key)
 * the answer commit together, and a retry with the same key replays the answer.
 */
export async function runAction(deps: WriteDeps, store: ResourceStore, name: string, workspaceId: string, id: string, body: Row, idempotent: IdempotentRequest | undefined, rendering: Rendering = AS_STORED): Promise<{ answer: Answer; replayed: boolean }> {
  const { resource } = store;
  const action = resource.def.actions?.[name];
  if (!action) throw new Error(`${resource.def.name} has no action ${name}`);
  const { db, clock, notifier } = deps;
  const now = clock.now();
  return idempotently(deps, workspaceId, idempotent, now, async (expired) => {
    let wrote = false;
    const answer = await writeTransaction(db, async (tx) => {
      let row = await findForUpdate(store, tx, workspaceId, id);
      let object = store.toObject(row, workspaceId);
      const update = async (changes: Row): Promise<Row> => {
        checkChanges(resource, changes);
        const applied = await applyUpdate(store, tx, workspaceId, row, changes, now);
        row = applied.row;
        object = applied.after;
        wrote ||= applied.wrote;
        return applied.after;
      };
      const returned: unknown = await action.handle({ object, body, update, ctx: { workspaceId, now: new Date(now) } });
      if (returned !== undefined && returned !== null && (typeof returned !== 'object' || Array.isArray(returned))) {
        throw new Error(`${resource.def.name} action ${name} returned ${JSON.stringify(returned)}, not the changes to apply (an object) or nothing`);
      }
      if (returned) {
        // The changes returned: what differs from the object as it stands (the object update()
        // gave back, returned as it is, changes nothing more). What is left is checked as
        // update() checks it: a field the resource does not have, or a kernel field given
        // another value, is refused as a PATCH refuses it, where it was left out unsaid.
        const changes = Object.fromEntries(Object.entries(returned as Row).filter(([field, value]) => object[field] !== value));
        if (Object.keys(changes).length > 0) await update(changes);
      }
      const made: Answer = { status: 200, location: null, body: JSON.stringify(rendering.object(object)), version: rendering.version };
      if (idempotent) await remember(db, tx, workspaceId, idempotent, made, now, expired);
      return made;
    });
    if (wrote) notifier.notify();
    return answer;
  });
}
