import type { Plugin } from 'esbuild';
import { pathToFileURL } from 'node:url';

/**
 * Imports a module file by path: a plugin or a migration. A TypeScript file needs a loader;
 * under tsx (npm start, the tests) it is there already. Where none runs (the bundled admin
 * command, compiled JavaScript given a folder of .ts plugins), or Node's own cannot (see
 * compilesInstead), the file is compiled here with
 * esbuild (tsx's own compiler, a dependency) and imported from memory: a tenth of a second,
 * where registering tsx's loader (a thread of its own) cost half a second of start-up.
 */
export async function importFile(file: string): Promise<unknown> {
  const url = pathToFileURL(file).href;
  try {
    return await import(url);
  } catch (err) {
    if (!compilesInstead(file, err)) throw err;
    return importCompiled(file);
  }
}

/**
 * Node's refusals of a TypeScript file that compiling it here does not share. Node 20, and 22
 * before 22.18, know no `.ts` at all (ERR_UNKNOWN_FILE_EXTENSION). From Node 22.18, and in 24,
 * Node strips the types itself, but does not take an import of `./x.js` for `./x.ts` as
 * TypeScript does (ERR_MODULE_NOT_FOUND: `workspace-api/plugin`'s own imports, a plugin's of the
 * kernel by relative path), strips none under node_modules (this package installed as a
 * dependency), and runs no syntax that is more than types, such as an enum. Each is found as
 * the module graph is linked, before any of its code has run. A module that is truly missing
 * is then named by the compiler, with the file and line that import it.
 */
const COMPILE_INSTEAD = new Set(['ERR_UNKNOWN_FILE_EXTENSION', 'ERR_MODULE_NOT_FOUND', 'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING', 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX']);

/** Whether `file` is TypeScript that Node's own import refused for a reason compiling it here does not share. */
export function compilesInstead(file: string, err: unknown): boolean {
  return /\.[cm]?ts$/.test(file) && COMPILE_INSTEAD.has(String((err as { code?: unknown } | null)?.code));
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
