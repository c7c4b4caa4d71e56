import { isDuplicateKey } from '../db/dialect.js';
import { writeTransaction } from '../db/tx.js';
import type { WriteDeps } from './writes.js';
import { eventsFor, writeEvents } from './outbox.js';
import { CommitOutcomeUnknown, outcomeUnknown } from '../errors.js';
import { newId } from '../ids.js';
import type { Row } from './define.js';
import { type Answer, type IdempotentRequest, lookUp, remember } from './idempotency.js';
import { checkReferences } from './references.js';
import type { CompiledResource, Registry } from './registry.js';
import { toObject } from './rows.js';
import { createStatement, values } from './statements.js';
import { checkInitialState, initialState, stampsFor } from './state.js';

/** The stored row of a new object: the body, defaults for what it left out, the kernel's fields. */
function newRow(resource: CompiledResource, workspaceId: string, body: Row, now: number): Row {
  const { def } = resource;
  const row: Row = { id: newId(def.idPrefix), workspace_id: workspaceId };
  for (const [field, schema] of Object.entries(def.fields)) {
    const value = body[field] !== undefined ? body[field] : (schema.readOnly ? null : (schema.default ?? null));
    row[field] = resource.kinds[field]?.encode(value) ?? value;
  }
  if (def.state) Object.assign(row, stampsFor(resource, undefined, row[def.state.field] ?? initialState(resource), now));
  row.created_at = now;
  row.updated_at = now;
  return row;
}

/** What a create answers: the answer to send, and whether it replays an earlier one. */
export interface Created {
  answer: Answer;
  replayed: boolean;
}

/**
 * Creates an object: 201 with it and its Location. The row, its events and (with an
 * Idempotency-Key) the answer commit together; a concurrent request with the same key replays
 * this answer. If the connection is lost at COMMIT, a new connection tells whether the row
 * (whose id is ours) was written.
 */
export async function createObject(deps: WriteDeps, registry: Registry, resource: CompiledResource, workspaceId: string, body: Row, idempotent: IdempotentRequest | undefined): Promise<Created> {
  const { def } = resource;
  const { db, clock, notifier } = deps;
  checkInitialState(resource, body);
  const now = clock.now();
  let expired = false;
  if (idempotent) {
    const earlier = await lookUp(db, workspaceId, idempotent, now);
    if (earlier.found === 'answer') return { answer: earlier.answer, replayed: true };
    expired = earlier.found === 'expired';
  }

  const row = newRow(resource, workspaceId, body, now);
  const object = toObject(resource, row);
  const answer: Answer = { status: 201, location: `/v1${def.path}/${String(row.id)}`, body: JSON.stringify(object) };
  try {
    await writeTransaction(db, async (tx) => {
      await checkReferences(db, tx, registry, resource, workspaceId, body);
      if (idempotent) await remember(db, tx, workspaceId, idempotent, answer, now, expired);
      const insert = createStatement(db, resource);
      await tx.run(insert.sql, values(insert, row));
      await writeEvents(db, tx, eventsFor(resource, workspaceId, { before: null, after: object }, now));
    });
  } catch (error) {
    if (idempotent && isDuplicateKey(error)) {
      const winner = await lookUp(db, workspaceId, idempotent, now);
      if (winner.found === 'answer') return { answer: winner.answer, replayed: true };
    }
    if (!(error instanceof CommitOutcomeUnknown)) throw error;
    // Lost at COMMIT: the id is ours, so a new connection can tell whether it was written.
    let written: boolean;
    try {
      written = (await db(def.table).first('id').where({ id: row.id, workspace_id: workspaceId })) !== undefined;
    } catch {
      throw outcomeUnknown(idempotent !== undefined);
    }
    if (!written) throw error.cause;
  }
  notifier.notify();
  return { answer, replayed: false };
}
