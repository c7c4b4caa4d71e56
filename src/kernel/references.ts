import type { Tx } from '../db/tx.js';
import { ApiError, type ErrorItem } from '../common/errors.js';
import type { Row } from './define.js';
import type { ResourceStore } from './store.js';

/**
 * Every reference the write sets must name a row of the same workspace (another workspace's id
 * answers as one that does not exist). The rows found are share-locked until the write commits,
 * so they cannot be deleted under it.
 */
export async function checkReferences(store: ResourceStore, tx: Tx, workspaceId: string, values: Row): Promise<void> {
  const errors: ErrorItem[] = [];
  for (const [field, target] of store.references) {
    const id = values[field];
    if (id === undefined || id === null) continue;
    if (!(await target.exists(tx, workspaceId, String(id)))) errors.push({ pointer: `/${field}`, message: `no ${target.resource.def.name} with id ${String(id)} in this workspace` });
  }
  if (errors.length > 0) {
    throw new ApiError('validation_failed', `The body names objects that do not exist: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
  }
}
