import { pathToFileURL } from 'node:url';

let typescript: Promise<unknown> | undefined;

/**
 * Imports a module file by path: a plugin or a migration. A TypeScript file needs a loader;
 * under tsx (npm start, the tests) it is there already. Where none runs (the bundled admin
 * command, compiled JavaScript given a folder of .ts plugins), tsx, a dependency, is registered
 * the first time a .ts file is met, and only then: it costs half a second of start-up.
 */
export async function importFile(file: string): Promise<unknown> {
  const url = pathToFileURL(file).href;
  try {
    return await import(url);
  } catch (err) {
    if (!/\.[cm]?ts$/.test(file) || (err as { code?: unknown }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw err;
    typescript ??= import('tsx/esm/api').then((tsx) => tsx.register());
    await typescript;
    // A fresh URL: the failed import of the first one stays cached as failed.
    return import(`${url}?typescript`);
  }
}
