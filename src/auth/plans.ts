export type ApiAccess = 'none' | 'read_only' | 'read_write';

export interface Plan {
  name: string;
  api_access: ApiAccess;
  max_keys: number;
  webhooks_per_month: number;
}

/** Scope prefixes that a read_only plan never grants. */
const WRITING = ['write:', 'delete:', 'admin:'];

export function writes(scope: string): boolean {
  return WRITING.some((prefix) => scope.startsWith(prefix));
}

/** The part of a key's scopes that its plan allows today (a downgraded plan narrows old keys). */
export function effectiveScopes(scopes: readonly string[], access: ApiAccess): string[] {
  if (access === 'none') return [];
  if (access === 'read_only') return scopes.filter((s) => !writes(s));
  return [...scopes];
}
