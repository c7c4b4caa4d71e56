import type { Knex } from 'knex';
import { newId } from '../common/ids.js';
import { keysetPage } from '../kernel/query/index.js';
import { iso } from '../db/iso.js';
import type { Actor, AuditContext } from '../common/who.js';
import { liveWorkspaceOf } from '../common/modes.js';

/** The operator at a shell (`npm run admin`). */
export const OPERATOR: AuditContext = { actor: { type: 'operator', id: null, label: 'admin command' }, ip: null };

/** The service acting on its own (a webhook disabled after 410 or five failing days). */
export const SYSTEM: AuditContext = { actor: { type: 'system', id: null, label: 'Workspace API' }, ip: null };

/** Every action the log records (docs/reference.md section 10). */
export const AUDIT_ACTIONS = [
  'key.created',
  'key.revoked',
  'key.rolled',
  'key.updated',
  'key.version_changed',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.disabled',
  'user.signed_in',
  'user.sign_in_failed',
  'workspace.plan_changed',
  'workspace.key_policy_changed',
  'workspace.test_data_deleted',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  workspaceId: string;
  action: AuditAction;
  target: { type: string; id: string };
  /** What changed, never a token, password or secret. */
  details?: Record<string, unknown>;
}

/**
 * Records one entry. Call it inside the transaction of the change it records: both commit, or
 * neither does.
 */
export async function recordAudit(trx: Knex | Knex.Transaction, context: AuditContext, entry: AuditEntry, now: number): Promise<void> {
  // One log per workspace, both modes in it: a change in test mode says so.
  const live = liveWorkspaceOf(entry.workspaceId);
  const details = live === entry.workspaceId ? (entry.details ?? {}) : { ...entry.details, mode: 'test' };
  await trx('audit_log').insert({
    id: newId('aud_'),
    workspace_id: live,
    at: now,
    actor_type: context.actor.type,
    actor_id: context.actor.id,
    actor_label: context.actor.label.slice(0, 254),
    action: entry.action,
    target_type: entry.target.type,
    target_id: entry.target.id,
    ip: context.ip?.slice(0, 64) ?? null,
    details: JSON.stringify(details),
  });
}

interface AuditRow {
  id: string;
  at: number | string;
  actor_type: Actor['type'];
  actor_id: string | null;
  actor_label: string;
  action: string;
  target_type: string;
  target_id: string;
  ip: string | null;
  details: string;
}

function toEntry(row: AuditRow) {
  return {
    id: row.id,
    at: iso(row.at),
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    ip: row.ip,
    details: JSON.parse(row.details) as Record<string, unknown>,
  };
}

/** What `hide_sign_ins` leaves out. */
const SIGN_INS = ['user.signed_in', 'user.sign_in_failed'];

/** A page of a workspace's log, newest first, optionally of one action, optionally without sign-ins. */
export function listAudit(db: Knex, workspaceId: string, query: { limit: number; cursor?: string; action?: string; hide_sign_ins?: boolean }) {
  const q = db('audit_log').where({ workspace_id: workspaceId });
  if (query.action) q.where({ action: query.action });
  if (query.hide_sign_ins) q.whereNotIn('action', SIGN_INS);
  return keysetPage(q, query, { resource: 'audit', sort: '-at' }, toEntry);
}
