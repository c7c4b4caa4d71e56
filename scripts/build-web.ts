/**
 * `npm run build:web` (run first by `npm start`, `npm test` and `npm run typecheck`): builds the
 * Developer page only when its inputs changed since the last build. Its inputs are the code the
 * internal OpenAPI document is generated from (src/, plugins/), the page's own source (web/),
 * and the lock file; their SHA-256 is kept beside the build. With nothing changed it writes no
 * file and says so; `-- --force` builds anyway.
 *
 * The build: the internal document -> its typed client (openapi-typescript) -> the page
 * type-checked against it (tsc -p web) -> bundled (web/build.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inputsHash } from './inputs-hash.mjs';

const root = join(import.meta.dirname, '..');
const STAMP = join(root, 'build', 'admin', '.inputs-sha256');
const OUTPUTS = [join(root, 'build', 'admin', 'index.html'), join(root, 'web', 'generated', 'internal-api.d.ts')];
const force = process.argv.includes('--force');
const hash = inputsHash(root, ['src', 'plugins', 'web', 'package-lock.json', 'tsconfig.json'], ['web/generated']);
if (!force && OUTPUTS.every(existsSync) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash) {
  console.error('Developer page up to date (build/admin/): nothing to build');
  process.exit(0);
}

const bin = (pkg: string, file: string) => join(root, 'node_modules', pkg, file);
/**
 * Runs one step of the build, its output the terminal's. A step that fails has said why itself
 * (a plugin's mistake is one line: src/startup.ts): this exits with its code, and no stack trace
 * of the build's own on top.
 */
const step = (args: string[]) => {
  try {
    execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  } catch (err) {
    process.exit((err as { status?: number | null }).status ?? 1);
  }
};
step(['--import', 'tsx', join(root, 'src', 'cli', 'openapi.ts'), '--internal', '--out', 'build/internal-openapi.json']);
step([bin('openapi-typescript', 'bin/cli.js'), 'build/internal-openapi.json', '--output', 'web/generated/internal-api.d.ts', '--silent']);
step([bin('typescript', 'bin/tsc'), '-p', 'web']);
step(['--import', 'tsx', join(root, 'web', 'build.ts')]);
writeFileSync(STAMP, hash);
