/**
 * Builds the Developer page into build/admin/ (served under /admin/ by the server): the
 * script bundled and minified by esbuild, beside the HTML and the style sheet. Run by
 * `npm run build:web`, which first generates the typed client from the internal OpenAPI
 * document and type-checks the page against it; `npm start` and `npm test` run it first.
 */
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const here = import.meta.dirname;
const out = join(here, '..', 'build', 'admin');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const result = await build({
  entryPoints: [join(here, 'src', 'main.tsx')],
  outfile: join(out, 'app.js'),
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});
for (const name of ['index.html', 'app.css']) copyFileSync(join(here, name), join(out, name));
const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
console.log(`built build/admin/ (app.js ${(bytes / 1024).toFixed(1)} KiB before compression)`);
