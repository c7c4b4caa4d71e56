import type { Knex } from 'knex';
import { OPERATOR, recordAudit } from '../audit/log.js';
import type { AuditContext } from '../common/who.js';
import { findPlan, liveKeys, lockWorkspace, RefusedError, whereLive } from '../auth/keys.js';
import type { Plan } from '../auth/plans.js';
import { asNumber } from '../db/decode.js';
import { transaction } from '../db/dialects/index.js';
import { iso } from '../db/iso.js';
import { monthStart } from '../webhooks/subscriptions.js';
import { noteAuthChange } from '../db/changes.js';
import { isLiveWorkspace, type Mode, testWorkspaceOf, workspaceIn } from '../common/modes.js';

export async function listWorkspaces(db: Knex): Promise<Array<{ id: string; name: string; plan: string; created_at: string; users: number; live_keys: number }>> {
  const rows = (await db('workspaces as w')
    .select('w.id', 'w.name', 'w.plan', 'w.created_at')
    .select(db('users').count('*').whereRaw('?? = ??', ['users.workspace_id', 'w.id']).as('users'))
    .select(whereLive(db('api_keys').count('*').whereRaw('?? = ??', ['api_keys.workspace_id', 'w.id']), Date.now()).as('live_keys'))
    .whereNull('w.test_of')
    .orderBy([{ column: 'w.created_at' }, { column: 'w.id' }])) as Array<Record<string, unknown>>;
  return rows.map((r) => ({ id: String(r.id), name: String(r.name), plan: String(r.plan), created_at: iso(r.created_at) as string, users: asNumber(r.users), live_keys: asNumber(r.live_keys) }));
}

/** Moves a workspace to another plan; the change and its audit entry commit together. */
export async function setPlan(db: Knex, workspaceId: string, planName: string, context: AuditContext = OPERATOR, now = Date.now()): Promise<{ id: string; plan: string; previous: string }> {
  const plan = await findPlan(db, planName);
  if (!plan) {
    const known = (await db('plans').pluck('name')) as string[];
    throw new RefusedError(`unknown plan "${planName}" (plans: ${known.join(', ')})`);
  }
  return transaction(db, async (trx) => {
    const workspace = isLiveWorkspace(workspaceId) ? await lockWorkspace<{ id: string; plan: string }>(trx, workspaceId, ['plan']) : undefined;
    if (!workspace) throw new RefusedError(`unknown workspace "${workspaceId}"`);
    if (workspace.plan === plan.name) return { id: workspace.id, plan: plan.name, previous: workspace.plan };
    await trx('workspaces').update({ plan: plan.name, updated_at: now }).whereIn('id', [workspaceId, testWorkspaceOf(workspaceId)]);
    await noteAuthChange(trx);
    await recordAudit(trx, context, { workspaceId, action: 'workspace.plan_changed', target: { type: 'workspace', id: workspaceId }, details: { from: workspace.plan, to: plan.name } }, now);
    return { id: workspace.id, plan: plan.name, previous: workspace.plan };
  });
}

/**
 * Sets (or, with null, lifts) the longest a new key of the workspace may live: every key made
 * after it must expire within that many days. Keys already made keep their expiry. Audited.
 */
export async function setKeyLifetime(db: Knex, workspaceId: string, days: number | null, context: AuditContext = OPERATOR, now = Date.now()): Promise<{ from: number | null; to: number | null }> {
  return transaction(db, async (trx) => {
    const workspace = isLiveWorkspace(workspaceId) ? await lockWorkspace<{ id: string; max_key_lifetime_days: number | null }>(trx, workspaceId, ['max_key_lifetime_days']) : undefined;
    if (!workspace) throw new RefusedError(`unknown workspace "${workspaceId}"`);
    const from = workspace.max_key_lifetime_days == null ? null : asNumber(workspace.max_key_lifetime_days);
    if (from === days) return { from, to: days };
    await trx('workspaces').update({ max_key_lifetime_days: days, updated_at: now }).whereIn('id', [workspaceId, testWorkspaceOf(workspaceId)]);
    await recordAudit(trx, context, { workspaceId, action: 'workspace.key_policy_changed', target: { type: 'workspace', id: workspaceId }, details: { max_key_lifetime_days: { from, to: days } } }, now);
    return { from, to: days };
  });
}

/** The workspace as its administration area shows it: its plan's limits, how much of them `mode`'s keys and subscriptions use, and its key policy. */
export async function workspaceSummary(db: Knex, workspace: { id: string; name: string; plan: string }, now: number, mode: Mode = 'live') {
  const plan = (await findPlan(db, workspace.plan)) as Plan;
  // The plan's allowances are counted per mode (common/modes.ts).
  const inMode = workspaceIn(workspace.id, mode);
  const keys = await liveKeys(db, inMode, now);
  const policy = (await db('workspaces').first('max_key_lifetime_days').where({ id: workspace.id })) as { max_key_lifetime_days: number | null } | undefined;
  const webhooks = await db('webhook_subscriptions').count({ n: '*' }).where({ workspace_id: inMode }).where('created_at', '>=', monthStart(now)).first();
  return {
    id: workspace.id,
    mode,
    name: workspace.name,
    plan: { name: plan.name, api_access: plan.api_access, max_keys: asNumber(plan.max_keys), webhooks_per_month: asNumber(plan.webhooks_per_month) },
    usage: { live_keys: keys, webhooks_this_month: asNumber(webhooks?.n ?? 0) },
    max_key_lifetime_days: policy?.max_key_lifetime_days == null ? null : asNumber(policy.max_key_lifetime_days),
  };
}
