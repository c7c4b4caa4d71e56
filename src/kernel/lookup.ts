import type { Knex } from 'knex';
import type { Tx } from '../db/tx.js';
import { ApiError } from '../common/errors.js';
import type { Row } from './define.js';
import type { CompiledResource } from './registry.js';
import { lockedObjectStatement } from './statements.js';

/** Another workspace's id answers exactly as an id that does not exist. */
export function notFound(resource: CompiledResource, id: string): ApiError {
  return new ApiError('not_found', `No ${resource.def.name} with id ${id}.`);
}

/** An id that cannot be one of this resource's is not looked up at all. */
export function plausibleId(resource: CompiledResource, id: string): boolean {
  return id.startsWith(resource.def.idPrefix) && id.length <= 64;
}

/** The stored row, locked until the transaction ends (SQLite has one writer: no lock needed). */
export async function findForUpdate(db: Knex, tx: Tx, resource: CompiledResource, workspaceId: string, id: string): Promise<Row> {
  if (!plausibleId(resource, id)) throw notFound(resource, id);
  const [row] = (await tx.all(lockedObjectStatement(db, resource).sql, [workspaceId, id])) as Row[];
  if (!row) throw notFound(resource, id);
  return row;
}
