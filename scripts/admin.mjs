#!/usr/bin/env node
/**
 * `npm run admin -- ...`: the operator's command (src/cli/admin.ts), started fast. Through tsx
 * it cost 2.5 s of CPU a call, most of it compiling and loading a hundred modules; here it runs
 * as one bundle, build/admin-cli.mjs, made by esbuild from src/ whenever src/ or the lock file
 * changed since it was made (their SHA-256 is kept beside it), so a call costs about half a
 * second on top of npm's own. Plugins and migrations are still read from their folders at run
 * time (src/common/modules.ts compiles a .ts one in memory with esbuild). Plain JavaScript:
 * it must start without tsx. Production runs the compiled `node dist/src/cli/admin.js` instead.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inputsHash } from './inputs-hash.mjs';

const root = join(import.meta.dirname, '..');
const entry = join(root, 'src', 'cli', 'admin.ts');
// In build/, under the checkout: src/common/config.ts finds the checkout (ROOT_DIR) above it.
const bundle = join(root, 'build', 'admin-cli.mjs');
const stampFile = `${bundle}.inputs-sha256`;

/** Bundles src/cli/admin.ts and what it imports, node_modules included but for native and optional drivers. */
async function build(esbuild, stamp) {
  // Made in a folder of its own, under its final name (the map is named inside the bundle).
  const folder = join(root, 'build', `.admin-cli.${process.pid}`);
  const temporary = join(folder, 'admin-cli.mjs');
  await esbuild.build({
    entryPoints: [entry],
    outfile: temporary,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Beside the bundle, read only when asked (node --enable-source-maps build/admin-cli.mjs ...):
    // parsing a 9 MB map on every call cost half a second of the command's start.
    sourcemap: 'linked',
    logLevel: 'warning',
    // Native (better-sqlite3), loaded only when needed (tsx), and knex's drivers for databases it is not used with.
    external: ['better-sqlite3', 'esbuild', 'tsx', 'tsx/*', 'pg', 'pg-native', 'pg-query-stream', 'sqlite3', 'mysql', 'mariadb', 'tedious', 'oracledb'],
    // CommonJS packages inside an ES module bundle still call require() for Node's own modules.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
  // Renamed into place whole: a second call at the same moment never runs half a bundle.
  renameSync(`${temporary}.map`, `${bundle}.map`);
  renameSync(temporary, bundle);
  rmSync(folder, { recursive: true, force: true });
  writeFileSync(stampFile, stamp);
}

const stamp = inputsHash(root, ['src', 'package-lock.json']);
const fresh = existsSync(bundle) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp;
const esbuild = fresh ? undefined : await import('esbuild').catch(() => undefined);
if (fresh || esbuild) {
  if (esbuild) await build(esbuild, stamp);
  await import(pathToFileURL(bundle).href);
} else {
  // Where esbuild cannot load (a platform without its binary): through tsx, as slow as before.
  (await import('tsx/esm/api')).register();
  await import(pathToFileURL(entry).href);
}
