/**
 * `npm run build`: the production build in dist/. tsc compiles src/ (server, worker, CLIs),
 * plugins/ and migrations/ with the project's settings; the Developer page built by
 * `npm run build:web` (which runs first) is copied beside them; dist/package.json marks the
 * files as ES modules, carries the version the documents state and names the plugins' entry
 * point. Start it with `node dist/src/server.js` (see docs/operator.md, "Deploying it").
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const dist = join(root, 'dist');
const page = join(root, 'build', 'admin');
if (!existsSync(join(page, 'index.html'))) throw new Error('build/admin/ is missing: run `npm run build:web` first (`npm run build` does)');

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
cpSync(page, join(dist, 'build', 'admin'), { recursive: true });
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string };
// The plugins' entry point, `workspace-api/plugin`, names the compiled file here.
writeFileSync(join(dist, 'package.json'), `${JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: 'module', exports: { './plugin': './src/plugin.js', './package.json': './package.json' } }, null, 2)}\n`);
console.log('built dist/: start it with `node dist/src/server.js`');
