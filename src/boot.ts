import { ConfigError, loadConfig, type Config } from './config.js';
import { createDeps, type Deps, type DepsOverrides } from './deps.js';
import { loadRegistry, PluginLoadError, type Registry } from './kernel/registry.js';

/** loadConfig -> createDeps -> plugins: the start of every entry point. Exits 1 naming what is wrong. */
export async function boot(env: NodeJS.ProcessEnv = process.env, overrides: DepsOverrides = {}): Promise<{ config: Config; deps: Deps; registry: Registry }> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  let registry: Registry;
  try {
    registry = await loadRegistry(config.pluginsDir);
  } catch (err) {
    if (err instanceof PluginLoadError) {
      console.error(`Plugin error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const deps = createDeps(config, overrides);
  return { config, deps, registry };
}
