import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, DAY_MS, loadConfig, serviceVersion } from '../common/config.js';
import { internalApi } from '../api/internal.js';
import { publicApi } from '../api/public.js';
import { loadPlugins } from '../boot.js';
import { apiAt, buildInternalOpenApi, buildOpenApi } from '../openapi/document.js';
import { runMain } from '../startup.js';
import { Versions } from '../versions/index.js';

/**
 * Writes the OpenAPI document that the server serves at /v1/openapi.json (or, with --internal,
 * the internal API's at /internal/v1/openapi.json), built from the same plugins (PLUGINS_DIR),
 * to --out FILE or stdout; --api-version YYYY-MM-DD describes that API version (the latest by
 * default). No database is touched.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--out');
  const out = at >= 0 ? args[at + 1] : undefined;
  if (at >= 0 && !out) throw new ConfigError('--out', 'needs a file name');
  // The document depends on no storage: the database's settings (and SECRET_KEYS, which MySQL requires) are not read.
  const config = loadConfig(Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'DATABASE_URL' && name !== 'SECRET_KEYS')));
  const registry = await loadPlugins(config.pluginsDir);
  const versions = new Versions(registry);
  const asked = args.indexOf('--api-version');
  const apiVersion = asked >= 0 ? args[asked + 1] : versions.latest;
  if (apiVersion === undefined || !versions.has(apiVersion)) throw new ConfigError('--api-version', `must be one of ${versions.known.join(', ')}`);
  const document = args.includes('--internal')
    ? buildInternalOpenApi(internalApi(registry), serviceVersion())
    : buildOpenApi(apiAt(publicApi(registry, undefined, { retentionDays: config.retentionMs / DAY_MS, versions }), apiVersion), versions.registryAt(registry, apiVersion), serviceVersion(), { timeoutMs: config.webhookTimeoutMs, retryDelays: config.webhookRetryDelays }, apiVersion);
  const text = `${JSON.stringify(document, null, 2)}\n`;
  if (out) {
    fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
    fs.writeFileSync(out, text);
    console.error(`wrote ${out}`);
  } else {
    process.stdout.write(text);
  }
}

runMain(main);
