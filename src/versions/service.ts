import type { ChangeDeclaration } from '../kernel/model/index.js';

/**
 * The service's own version changes, in one place (docs/reference.md section 19). A plugin
 * declares its resource's changes in its own file (`changes: [...]`); a change here is the
 * service's: of one resource it ships (`resource`), or, without one, of every resource's
 * objects (code only: `request` and `response` are given each resource's bodies and objects).
 *
 * The first version, 2026-11-21, is the API as it was built before versions existed: it
 * changes nothing, so it has no entry. Add a change here with the date of the release that
 * makes it; the list of versions (GET /v1/versions) follows.
 */
export interface ServiceChange extends ChangeDeclaration {
  /** The resource it changes, by name; none: every resource. */
  resource?: string;
}

export const SERVICE_CHANGES: readonly ServiceChange[] = [];
