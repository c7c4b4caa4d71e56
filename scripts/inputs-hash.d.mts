/** The SHA-256 of `paths` (files or folders, relative to `root`), leaving out the folders in `skip`. */
export function inputsHash(root: string, paths: string[], skip?: string[]): string;
