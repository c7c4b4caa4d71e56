import { writeTransaction, type Tx } from '../../db/tx.js';
import type { WriteDeps } from '../../deps.js';
import { CommitOutcomeUnknown, outcomeUnknown } from '../../common/errors.js';
import { newId } from '../../common/ids.js';
import { checkMoney, type Row } from '../model/index.js';
import { type Answer, AS_STORED, idempotently, type IdempotentRequest, remember, type Rendering } from './idempotency.js';
import { checkReferences } from './checks.js';
import { runBeforeWrite, runValidate } from './hooks.js';
import { pickFields, type ResourceStore } from '../storage/index.js';
import { checkInitialState, initialState, stampsFor } from './state.js';

/** The stored row of a new object: the body, defaults for what it left out, the kernel's fields. */
export function newRow(store: ResourceStore, workspaceId: string, body: Row, now: number): Row {
  const { resource } = store;
  const { def } = resource;
  const row: Row = { id: newId(def.idPrefix), workspace_id: workspaceId };
  for (const [field, schema] of Object.entries(def.fields)) {
    const value = body[field] !== undefined ? body[field] : (schema.readOnly ? null : (schema.default ?? null));
    row[field] = resource.kinds[field]?.encode(value) ?? value;
  }
  if (def.state) Object.assign(row, stampsFor(resource, undefined, row[def.state.field] ?? initialState(resource), now));
  row.created_at = now;
  row.updated_at = now;
  row.version = 1;
  return row;
}

/** A new object's stored row and object after the plugin's hooks: validate, then beforeWrite (in the write's transaction). */
export async function afterHooks(store: ResourceStore, workspaceId: string, body: Row, row: Row, now: number): Promise<{ stored: Row; object: Row }> {
  const { resource } = store;
  const ctx = { workspaceId, now: new Date(now) };
  await runValidate(resource, body, undefined, ctx);
  const proposed = await runBeforeWrite(resource, store.toObject(row, workspaceId), undefined, ctx);
  const stored = { ...row, ...store.toStored(pickFields(resource, proposed)) };
  return { stored, object: store.toObject(stored, workspaceId) };
}

/** Writes a new object in `tx`: its references checked (share-locked), its row, its events. */
export async function insertNew(store: ResourceStore, tx: Tx, workspaceId: string, references: Row, stored: Row, object: Row, now: number): Promise<void> {
  await checkReferences(store, tx, workspaceId, references);
  await store.insert(tx, stored);
  await store.emit(tx, workspaceId, { before: null, after: object }, now);
}

/**
 * After a connection lost at COMMIT: the ids written are ours, so another connection can tell
 * whether the write committed. `read` finds what it wrote (undefined: nothing); when it was not
 * written the write's own error stands, and when that cannot be told either, 503.
 */
export async function afterLostCommit<T>(lost: CommitOutcomeUnknown, idempotent: boolean, read: () => Promise<T | undefined>): Promise<T> {
  let written: T | undefined;
  try {
    written = await read();
  } catch {
    throw outcomeUnknown(idempotent);
  }
  if (written === undefined) throw lost.cause;
  return written;
}

/** What a create answers: the answer to send, and whether it replays an earlier one. */
export interface Created {
  answer: Answer;
  replayed: boolean;
}

/**
 * Creates an object: 201 with it and its Location (`locationOf` its id, as the API serving it writes it). The row, its events and (with an
 * Idempotency-Key) the answer commit together; a concurrent request with the same key replays
 * this answer (as `rendering` writes it: in the caller's API version). If the connection is lost at COMMIT, a new connection tells whether the row
 * (whose id is ours) was written.
 */
export async function createObject(deps: WriteDeps, store: ResourceStore, workspaceId: string, body: Row, idempotent: IdempotentRequest | undefined, locationOf: (id: string) => string, rendering: Rendering = AS_STORED): Promise<Created> {
  const { resource } = store;
  const { def } = resource;
  const { db, clock, notifier } = deps;
  checkInitialState(resource, body);
  checkMoney(resource.money, body);
  const now = clock.now();
  const row = newRow(store, workspaceId, body, now);
  const hooked = def.validate !== undefined || def.beforeWrite !== undefined;
  const answerFor = (object: Row): Answer => ({ status: 201, location: locationOf(String(row.id)), body: JSON.stringify(rendering.object(object)), version: rendering.version });
  // Without hooks (the hot path) the object and its answer are known before the transaction; with them, inside it.
  const plain = hooked ? undefined : store.toObject(row, workspaceId);
  const ready = plain && answerFor(plain);
  return idempotently(deps, workspaceId, idempotent, now, async (expired) => {
    let answer: Answer;
    try {
      answer = await writeTransaction(db, async (tx) => {
        const { stored, object } = plain ? { stored: row, object: plain } : await afterHooks(store, workspaceId, body, row, now);
        await insertNew(store, tx, workspaceId, plain ? body : pickFields(resource, object), stored, object, now);
        const made = ready ?? answerFor(object);
        if (idempotent) await remember(db, tx, workspaceId, idempotent, made, now, expired);
        return made;
      });
    } catch (error) {
      if (!(error instanceof CommitOutcomeUnknown)) throw error;
      const written = await afterLostCommit(error, idempotent !== undefined, () => store.find(workspaceId, String(row.id)));
      answer = ready ?? answerFor(written);
    }
    notifier.notify();
    return answer;
  });
}
