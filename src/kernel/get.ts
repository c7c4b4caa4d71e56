import type { Knex } from 'knex';
import type { Reads } from '../db/reads.js';
import { objectStatement } from './statements.js';
import type { Row } from './define.js';
import { notFound, plausibleId } from './lookup.js';
import type { CompiledResource } from './registry.js';
import { toObject } from './rows.js';

/** One object of the workspace, or not_found (another workspace's id answers the same). */
export async function getObject(db: Knex, reads: Reads, resource: CompiledResource, workspaceId: string, id: string): Promise<Row> {
  if (!plausibleId(resource, id)) throw notFound(resource, id);
  const [row] = (await reads.all(objectStatement(db, resource).sql, [workspaceId, id])) as Row[];
  if (!row) throw notFound(resource, id);
  return toObject(resource, row);
}
