/**
 * What decides whether a build made from the checkout is still current: the SHA-256 of the
 * given files and folders (every file under them, by path and content, in path order). Plain
 * JavaScript, so scripts/admin.mjs can use it before anything is compiled.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

function files(path, skip) {
  if (skip.has(path) || !existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => files(join(path, name), skip));
}

/** `paths` relative to `root`; `skip` names folders (relative to `root`) left out. */
export function inputsHash(root, paths, skip = []) {
  const skipped = new Set(skip.map((p) => join(root, p)));
  const hash = createHash('sha256');
  for (const file of paths.flatMap((p) => files(join(root, p), skipped)).sort()) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}
