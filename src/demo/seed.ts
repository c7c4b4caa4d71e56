import { createUser } from '../admin/users.js';
import { createKey, createWorkspace } from '../auth/keys.js';
import { scopeCatalog } from '../auth/scopes.js';
import type { Deps } from '../deps.js';
import { insertSamples } from './samples.js';
import type { Registry } from '../kernel/registry/index.js';
import type { AuditContext } from '../common/who.js';

const ROWS_PER_RESOURCE = 60;

/** Who made the demo key, as the page and the audit log say it: not the admin command, which nobody ran. */
const DEMO_SETUP: AuditContext = { actor: { type: 'operator', id: null, label: 'demo set-up (first start)' }, ip: null };

/**
 * On an empty database only: a demo workspace on the pro plan, sample rows of every resource,
 * one key holding every scope, and an admin user of the administration area. The token and the
 * password are returned to be printed once; they are not logged.
 */
export interface Demo {
  workspaceId: string;
  keyId: string;
  token: string;
  /** The demo admin of the administration area, and its generated password. */
  admin: { email: string; password: string };
}

/** The demo admin's address (example.com is reserved for examples: it reaches nobody). */
export const DEMO_ADMIN_EMAIL = 'admin@example.com';

export async function seedDemoIfEmpty(deps: Deps, registry: Registry): Promise<Demo | null> {
  const existing = await deps.db('workspaces').first('id');
  if (existing) return null;
  const workspace = await createWorkspace(deps.db, { name: 'Demo workspace', plan: 'pro' });
  await insertSamples(deps.db, registry, workspace.id, ROWS_PER_RESOURCE);
  const catalog = scopeCatalog(registry).map((s) => s.name);
  const key = await createKey(deps.db, catalog, { workspace: workspace.id, name: 'demo key', scopes: catalog, rate_limit: 600 }, DEMO_SETUP);
  const admin = await createUser(deps.db, { workspace: workspace.id, email: DEMO_ADMIN_EMAIL, name: 'Demo admin', role: 'admin' });
  return { workspaceId: workspace.id, keyId: key.id, token: key.token, admin: { email: admin.email, password: admin.password } };
}
