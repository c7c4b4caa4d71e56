import type { Knex } from 'knex';
import type { Tx } from '../db/tx.js';
import { ApiError, type ErrorItem } from '../common/errors.js';
import type { Row } from './define.js';
import type { CompiledResource, Registry } from './registry.js';
import { referenceStatement } from './statements.js';

/**
 * Every reference the write sets must name a row of the same workspace (another workspace's id
 * answers as one that does not exist). The rows found are share-locked until the write commits,
 * so they cannot be deleted under it.
 */
export async function checkReferences(db: Knex, tx: Tx, registry: Registry, resource: CompiledResource, workspaceId: string, values: Row): Promise<void> {
  const errors: ErrorItem[] = [];
  for (const [field, target] of Object.entries(resource.def.references ?? {})) {
    const id = values[field];
    if (id === undefined || id === null) continue;
    const other = registry.byName.get(target);
    if (!other) throw new Error(`reference ${field} names unknown resource ${target}`);
    const found = await tx.all(referenceStatement(db, other.def.table).sql, [workspaceId, id]);
    if (found.length === 0) errors.push({ pointer: `/${field}`, message: `no ${target} with id ${String(id)} in this workspace` });
  }
  if (errors.length > 0) {
    throw new ApiError('validation_failed', `The body names objects that do not exist: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
  }
}
