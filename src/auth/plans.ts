import type { Knex } from 'knex';
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

/** Whether a plan includes webhooks at all (the free plan does not): one rule for creating, testing, retrying and fanning out. */
export function allowsWebhooks(plan: Pick<Plan, 'webhooks_per_month'> | undefined): plan is Plan {
  return plan !== undefined && plan.webhooks_per_month > 0;
}

/** The same rule as a condition on the `plans` table (as `alias`), for a query that joins it. */
export function whereAllowsWebhooks(q: Knex.QueryBuilder, alias: string): Knex.QueryBuilder {
  return q.where(`${alias}.webhooks_per_month`, '>', 0);
}
