import { createKey, createWorkspace } from '../auth/keys.js';
import { scopeCatalog } from '../auth/scopes.js';
import type { Deps } from '../deps.js';
import { insertSamples } from './samples.js';
import type { Registry } from '../kernel/registry.js';

const ROWS_PER_RESOURCE = 60;

/**
 * On an empty database only: a demo workspace on the pro plan, sample rows of every resource,
 * and one key holding every scope. The token is returned to be printed once; it is not logged.
 */
export async function seedDemoIfEmpty(deps: Deps, registry: Registry): Promise<{ workspaceId: string; keyId: string; token: string } | null> {
  const existing = await deps.db('workspaces').first('id');
  if (existing) return null;
  const workspace = await createWorkspace(deps.db, { name: 'Demo workspace', plan: 'pro' });
  await insertSamples(deps.db, registry, workspace.id, ROWS_PER_RESOURCE);
  const catalog = scopeCatalog(registry).map((s) => s.name);
  const key = await createKey(deps.db, catalog, { workspace: workspace.id, name: 'demo key', scopes: catalog, rate_limit: 600 });
  return { workspaceId: workspace.id, keyId: key.id, token: key.token };
}
