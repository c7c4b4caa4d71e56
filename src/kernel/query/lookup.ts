import type { Tx } from '../../db/tx.js';
import { ApiError } from '../../common/errors.js';
import { isIdOf } from '../../common/ids.js';
import type { Row } from '../model/index.js';
import type { CompiledResource } from '../registry/index.js';
import type { ResourceStore } from '../storage/index.js';

/** Another workspace's id answers exactly as an id that does not exist. */
export function notFound(resource: CompiledResource, id: string): ApiError {
  return new ApiError('not_found', `No ${resource.def.name} with id ${id}.`);
}

/** An id that cannot be one of this resource's is not looked up at all. */
export function plausibleId(resource: CompiledResource, id: string): boolean {
  return isIdOf(resource.def.idPrefix, id);
}

/** The stored row, locked until the transaction ends, or not_found. */
export async function findForUpdate(store: ResourceStore, tx: Tx, workspaceId: string, id: string): Promise<Row> {
  const row = plausibleId(store.resource, id) ? await store.lock(tx, workspaceId, id) : undefined;
  if (!row) throw notFound(store.resource, id);
  return row;
}

/** One object of the workspace, or not_found (another workspace's id answers the same). */
export async function getObject(store: ResourceStore, workspaceId: string, id: string): Promise<Row> {
  const object = plausibleId(store.resource, id) ? await store.find(workspaceId, id) : undefined;
  if (!object) throw notFound(store.resource, id);
  return object;
}
