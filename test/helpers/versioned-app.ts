import path from 'node:path';
import { createKey } from '../../src/auth/keys.js';
import { scopeCatalog } from '../../src/auth/scopes.js';
import { loadConfig, ROOT_DIR } from '../../src/common/config.js';
import { createDb } from '../../src/db/connect.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { Versions } from '../../src/versions/index.js';
import { startApp, type TestApp } from './app.js';
import { backend, isolatedDatabase } from './backend.js';
import { besidePlugins } from './beside-plugins.js';

/** The versions of the gadgets fixture (test/versions/gadgets): the first, its rename, its conversion by code. */
export const GADGET_VERSIONS = { first: '2026-11-21', renamed: '2027-01-15', latest: '2027-02-01' } as const;

export interface VersionedApp {
  app: TestApp;
  versions: Versions;
  /** A key of the workspace pinned to `version` (the latest when none), holding every scope. */
  keyAt(workspaceId: string, version?: string): Promise<{ id: string; token: string }>;
  close(): Promise<void>;
}

/**
 * The app with the gadgets fixture beside the shipped plugins, on a database of its own
 * (migrated with the fixture's migration): three API versions to test conversions with.
 */
export async function startVersionedApp(name: string, env: Record<string, string> = {}): Promise<VersionedApp> {
  const folders = besidePlugins(name);
  const fixture = path.join(ROOT_DIR, 'test', 'versions', 'gadgets');
  for (const file of ['gadgets.ts', '20261202130000_gadgets.ts']) folders.place(path.join(fixture, file));
  const database = await isolatedDatabase(name);
  const own = { ...database.env, PLUGINS_DIR: folders.plugins, MIGRATIONS_DIR: folders.migrations };
  const config = loadConfig({ ...backend().env, ...own });
  const db = createDb(config.database);
  await migrateLatest(db, config.migrationsDirs);
  await db.destroy();
  const app = await startApp({ env: { ...own, ...env } });
  const versions = new Versions(app.registry);
  const scopes = scopeCatalog(app.registry).map((s) => s.name);
  return {
    app,
    versions,
    async keyAt(workspaceId, version) {
      const key = await createKey(app.deps.db, { scopes, versions }, { workspace: workspaceId, name: `key ${version ?? 'latest'}`, scopes, rate_limit: 6000, ...(version ? { api_version: version } : {}) });
      return { id: key.id, token: key.token };
    },
    async close() {
      await app.close();
      await database.drop();
      folders.remove();
    },
  };
}
