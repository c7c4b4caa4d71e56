import type { Plugin } from 'esbuild';
import { pathToFileURL } from 'node:url';

/**
 * Imports a module file by path: a plugin or a migration. A TypeScript file needs a loader;
 * under tsx (npm start, the tests) it is there already. Where none runs (the bundled admin
 * command, compiled JavaScript given a folder of .ts plugins), the file is compiled here with
 * esbuild (tsx's own compiler, a dependency) and imported from memory: a tenth of a second,
 * where registering tsx's loader (a thread of its own) cost half a second of start-up.
 */
export async function importFile(file: string): Promise<unknown> {
  const url = pathToFileURL(file).href;
  try {
    return await import(url);
  } catch (err) {
    if (!/\.[cm]?ts$/.test(file) || (err as { code?: unknown }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw err;
    return importCompiled(file);
  }
}

/**
 * The file and what it imports by relative path (TypeScript included) in one module; a package
 * it imports stays outside, named by its absolute URL, so it is the one Node would have loaded
 * for the file where it is, and loaded once.
 */
export async function importCompiled(file: string): Promise<unknown> {
  const esbuild = await import('esbuild');
  const packagesByAddress: Plugin = {
    name: 'packages-by-address',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === 'resolving' || args.path.startsWith('node:')) return undefined;
        const found = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'resolving' });
        if (found.errors.length > 0) return { errors: found.errors };
        // A package of plain JavaScript is loaded by Node; TypeScript (this package's own entry points) is compiled in.
        if (/\.[cm]?tsx?$/.test(found.path)) return { path: found.path };
        return found.external ? { path: found.path, external: true } : { path: pathToFileURL(found.path).href, external: true };
      });
    },
  };
  const result = await esbuild.build({
    entryPoints: [file],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'silent',
    plugins: [packagesByAddress],
  });
  const code = result.outputFiles[0]!.text;
  return import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
}
