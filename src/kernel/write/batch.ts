import { writeTransaction } from '../../db/tx.js';
import { ApiError, CommitOutcomeUnknown } from '../../common/errors.js';
import { checkMoney, type Row } from '../model/index.js';
import { afterHooks, afterLostCommit, newRow, type Created } from './create.js';
import { checkReferences } from './checks.js';
import { type Answer, AS_STORED, idempotently, type IdempotentRequest, remember, type Rendering } from './idempotency.js';
import { pickFields, type ResourceStore } from '../storage/index.js';
import { checkInitialState } from './state.js';
import type { WriteDeps } from '../../deps.js';

/** The most objects one batch creates (docs/reference.md section 14). */
export const MAX_BATCH = 100;

/** An item's refusal as the batch's: the detail says which item, each pointer starts with /data/<i>. */
function itemError(error: unknown, index: number): unknown {
  if (!(error instanceof ApiError)) return error;
  const errors = (error.extras.errors ?? []).map((e) => (e.pointer !== undefined ? { ...e, pointer: `/data/${index}${e.pointer}` } : e));
  return new ApiError(error.code, `Item ${index}: ${error.detail}`, { ...error.extras, errors });
}

/**
 * Creates 1 to 100 objects in one transaction, all or none (`POST /v1/<path>/batch`): 201 with
 * them in order, each with its `<resource>.created` event; the first item refused refuses the
 * batch, naming it. An Idempotency-Key covers the batch as a whole.
 */
export async function createBatch(deps: WriteDeps, store: ResourceStore, workspaceId: string, bodies: Row[], idempotent: IdempotentRequest | undefined, rendering: Rendering = AS_STORED): Promise<Created> {
  const { resource } = store;
  const { db, clock, notifier } = deps;
  bodies.forEach((body, i) => {
    try {
      checkInitialState(resource, body);
      checkMoney(resource.money, body);
    } catch (error) {
      throw itemError(error, i);
    }
  });
  const now = clock.now();
  const rows = bodies.map((body) => newRow(store, workspaceId, body, now));
  const hooked = resource.def.validate !== undefined || resource.def.beforeWrite !== undefined;
  return idempotently(deps, workspaceId, idempotent, now, async (expired) => {
    let made: Answer;
    try {
      made = await writeTransaction(db, async (tx) => {
        const objects: Row[] = [];
        const stored: Row[] = [];
        for (const [i, body] of bodies.entries()) {
          try {
            const row = rows[i] as Row;
            const item = hooked ? await afterHooks(store, workspaceId, body, row, now) : { stored: row, object: store.toObject(row, workspaceId) };
            await checkReferences(store, tx, workspaceId, hooked ? pickFields(resource, item.object) : body);
            stored.push(item.stored);
            objects.push(item.object);
          } catch (error) {
            throw itemError(error, i);
          }
        }
        // Every item passed: the rows a hundred per statement, then their events.
        await store.insertMany(tx, stored);
        await store.emitMany(tx, workspaceId, objects.map((after) => ({ before: null, after })), now);
        const answer: Answer = { status: 201, location: null, body: JSON.stringify({ data: objects.map((o) => rendering.object(o)) }), version: rendering.version };
        if (idempotent) await remember(db, tx, workspaceId, idempotent, answer, now, expired);
        return answer;
      });
    } catch (error) {
      if (!(error instanceof CommitOutcomeUnknown)) throw error;
      const ids = rows.map((r) => String(r.id));
      const written = await afterLostCommit(error, idempotent !== undefined, async () => {
        const found = await store.findMany(workspaceId, ids);
        return found.length > 0 ? new Map(found.map((o) => [String(o.id), o])) : undefined;
      });
      made = { status: 201, location: null, body: JSON.stringify({ data: ids.map((id) => rendering.object(written.get(id)!)) }), version: rendering.version };
    }
    notifier.notify();
    return made;
  });
}
