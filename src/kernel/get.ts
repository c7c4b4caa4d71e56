import type { Row } from './define.js';
import { notFound, plausibleId } from './lookup.js';
import type { ResourceStore } from './store.js';

/** One object of the workspace, or not_found (another workspace's id answers the same). */
export async function getObject(store: ResourceStore, workspaceId: string, id: string): Promise<Row> {
  const object = plausibleId(store.resource, id) ? await store.find(workspaceId, id) : undefined;
  if (!object) throw notFound(store.resource, id);
  return object;
}
