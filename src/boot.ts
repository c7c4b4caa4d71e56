import { loadConfig, type Config } from './common/config.js';
import { createDeps, type Deps, type DepsOverrides } from './deps.js';
import { migrateCreating } from './db/create.js';
import { servedPaths } from './api/public.js';
import { loadRegistry, type Registry } from './kernel/registry/index.js';
import { StartupError } from './common/errors.js';
import { refuseUnopenable } from './secrets/stored.js';

/** The plugins of a folder, none of them at a path the service serves itself. */
export function loadPlugins(dir: string): Promise<Registry> {
  return loadRegistry(dir, { servedPaths: servedPaths() });
}

/**
 * loadConfig -> plugins -> createDeps: the start of every entry point. A bad setting or plugin
 * throws (ConfigError, PluginLoadError); runMain() says which in one line.
 */
export async function boot(env: NodeJS.ProcessEnv = process.env, overrides: DepsOverrides = {}): Promise<{ config: Config; deps: Deps; registry: Registry }> {
  const config = loadConfig(env);
  const registry = await loadPlugins(config.pluginsDir);
  const deps = createDeps(config, overrides);
  return { config, deps, registry };
}

/** Brings the database to the latest schema; returns what was applied. */
export async function migrate(deps: Deps): Promise<string[]> {
  try {
    const { applied, created } = await migrateCreating(deps.db, deps.config.database, deps.config.migrationsDirs, { keyring: deps.secrets });
    if (created) deps.log.info({ database: created }, 'created the database');
    await refuseUnopenable(deps.db, deps.secrets, deps.config);
    return applied;
  } catch (err) {
    await deps.close();
    if (err instanceof StartupError) throw err;
    throw new StartupError(`Cannot migrate the database at DATABASE_URL: ${(err as Error).message}`);
  }
}

/** Settings that must not reach production are said once, at start-up, in the log. */
export function warnOfDevelopmentSettings(deps: Deps): void {
  if (deps.config.webhookAllowPrivate) {
    deps.log.warn({ setting: 'WEBHOOK_ALLOW_PRIVATE' }, 'WEBHOOK_ALLOW_PRIVATE=true: webhooks may reach http URLs and private addresses (development only; never in production)');
  }
}
