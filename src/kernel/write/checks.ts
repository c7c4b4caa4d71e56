import type { Tx } from '../../db/tx.js';
import { DONE } from '../../common/done.js';
import { ApiError, type ErrorItem } from '../../common/errors.js';
import type { Row } from '../model/index.js';
import type { ResourceStore } from '../storage/index.js';

/**
 * Optimistic concurrency (docs/reference.md section 16): every object carries `version` (1 on create, +1
 * per update, in the write's transaction); GET answers it as `ETag: "<version>"`, and PATCH and
 * DELETE take `If-Match` with that tag. The check runs after the row is locked, so of two
 * writes sent with the same version exactly one wins.
 */

export const IF_MATCH = 'If-Match';
export const IF_NONE_MATCH = 'If-None-Match';

/** The entity tag of a version, as ETag writes it. */
export const etagOf = (version: unknown) => `"${String(version)}"`;

/** What an If-Match header admits: any version (`*`), or these (strong tags compared strongly: a weak tag matches none). */
export type Expected = { any: true } | { any: false; versions: ReadonlySet<number> };

const TAG = /^(W\/)?"([^"]*)"$|^(\d+)$/;

/**
 * The If-Match header, read: undefined when absent. Tags are `"3"` (quotes optional: `3`), a
 * list of them, or `*`; anything else is 400 invalid_parameter naming the header.
 */
export function expectedVersion(header: string): Expected | undefined {
  return versionsIn(IF_MATCH, header, 'strong');
}

/**
 * The If-None-Match header of a GET, read as If-Match is, but compared weakly (RFC 9110: `W/"3"`
 * matches version 3): undefined when absent.
 */
export function knownVersions(header: string): Expected | undefined {
  return versionsIn(IF_NONE_MATCH, header, 'weak');
}

/** Whether a read header names `current` (or is `*`). */
const names = (tags: Expected, current: unknown) => tags.any || tags.versions.has(Number(current));

/** True when a GET's If-None-Match names the object's current version (or is `*`): 304, nothing sent again. */
export function unchanged(known: Expected | undefined, current: unknown): boolean {
  return known !== undefined && names(known, current);
}

function versionsIn(name: string, header: string, comparison: 'strong' | 'weak'): Expected | undefined {
  const value = header.trim();
  if (value === '') return undefined;
  if (value === '*') return { any: true };
  const versions = new Set<number>();
  for (const part of value.split(',')) {
    const tag = TAG.exec(part.trim());
    if (!tag) {
      throw new ApiError('invalid_parameter', `${name} must be an entity tag such as "3" (an object's ETag, as GET answers it), a comma-separated list of them, or *.`, { errors: [{ parameter: name, message: 'must be an entity tag such as "3", a comma-separated list of them, or *' }] });
    }
    const digits = tag[3] ?? (tag[1] && comparison === 'strong' ? undefined : tag[2]);
    if (digits !== undefined && /^[1-9]\d{0,14}$/.test(digits)) versions.add(Number(digits));
  }
  return { any: false, versions };
}

/** 412 version_mismatch unless the object's version is one If-Match admits. */
export function checkVersion(expected: Expected | undefined, current: unknown): void {
  if (!expected || names(expected, current)) return;
  throw new ApiError('version_mismatch', `The object is at version ${String(current)}, not the one If-Match names: read it again, then retry with If-Match: ${etagOf(current)}.`, {
    headers: { ETag: etagOf(current) },
    fields: { current_version: Number(current) },
  });
}

/**
 * Every reference the write sets must name a row of the same workspace (another workspace's id
 * answers as one that does not exist). The rows found are share-locked until the write commits,
 * so they cannot be deleted under it.
 */
export function checkReferences(store: ResourceStore, tx: Tx, workspaceId: string, values: Row): Promise<void> {
  // A write that sets no reference (most creates) has nothing to check: no promise of its own.
  for (const field of store.references.keys()) {
    const id = values[field];
    if (id !== undefined && id !== null) return checkEach(store, tx, workspaceId, values);
  }
  return DONE;
}

async function checkEach(store: ResourceStore, tx: Tx, workspaceId: string, values: Row): Promise<void> {
  const errors: ErrorItem[] = [];
  for (const [field, target] of store.references) {
    const id = values[field];
    if (id === undefined || id === null) continue;
    if (!(await target.exists(tx, workspaceId, String(id)))) errors.push({ pointer: `/${field}`, message: `no ${target.resource.def.name} with id ${String(id)} in this workspace` });
  }
  if (errors.length > 0) {
    throw new ApiError('validation_failed', `The body names objects that do not exist: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
  }
}
