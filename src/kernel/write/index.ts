/**
 * How a resource is written: create, update, delete, batch and actions, each in one transaction
 * with its hooks, state machine, If-Match and reference checks, and idempotent replays.
 */
export { runAction } from './actions.js';
export { MAX_BATCH, createBatch } from './batch.js';
export { IF_MATCH, IF_NONE_MATCH, etagOf, expectedVersion, knownVersions, unchanged } from './checks.js';
export { createObject } from './create.js';
export { AS_STORED, IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY, idempotentRequest, sweepExpiredKeys, type Answer, type Rendering } from './idempotency.js';
export { deleteObject, updateObject } from './update.js';
