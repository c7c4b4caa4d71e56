import type { Knex } from 'knex';
import { RefusedError } from '../auth/keys.js';
import { isDuplicateKey } from '../db/dialect.js';
import { transaction } from '../db/dialects/index.js';
import { newId } from '../common/ids.js';
import { iso } from '../db/iso.js';
import { generatePassword, hashPassword } from './passwords.js';

export const ROLES = ['admin', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** A person who signs in to the administration area: one workspace, one role. */
export interface UserRecord {
  id: string;
  workspace_id: string;
  email: string;
  name: string;
  role: Role;
  created_at: string;
  disabled_at: string | null;
}

/** Addresses are compared and stored lower case. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;

interface UserRow {
  id: string;
  workspace_id: string;
  email: string;
  name: string;
  role: Role;
  created_at: number | string;
  disabled_at: number | string | null;
}

const toUser = (row: UserRow): UserRecord => ({
  id: row.id,
  workspace_id: row.workspace_id,
  email: row.email,
  name: row.name,
  role: row.role,
  created_at: iso(row.created_at) as string,
  disabled_at: iso(row.disabled_at),
});

/** Makes a user with a generated password, returned here once and stored only as its hash. */
export async function createUser(db: Knex, input: { workspace: string; email: string; name?: string; role?: string }, now = Date.now()): Promise<UserRecord & { password: string }> {
  const email = normalizeEmail(input.email);
  if (email.length > 254 || !EMAIL.test(email)) throw new RefusedError(`"${input.email}" is not an email address`);
  const role = input.role ?? 'admin';
  if (!(ROLES as readonly string[]).includes(role)) throw new RefusedError(`unknown role "${role}" (roles: ${ROLES.join(', ')})`);
  const name = (input.name ?? email.split('@')[0] ?? email).trim();
  if (name.length < 1 || name.length > 200) throw new RefusedError('name must be 1 to 200 characters');
  // People belong to the live workspace; its test twin has none of its own (common/modes.ts).
  const workspace = await db('workspaces').first('id').where({ id: input.workspace }).whereNull('test_of');
  if (!workspace) throw new RefusedError(`unknown workspace "${input.workspace}"`);
  const password = generatePassword();
  const row: UserRow & { password_hash: string; updated_at: number } = {
    id: newId('usr_'),
    workspace_id: input.workspace,
    email,
    name,
    role: role as Role,
    password_hash: await hashPassword(password),
    created_at: now,
    updated_at: now,
    disabled_at: null,
  };
  try {
    await db('users').insert(row);
  } catch (err) {
    if (isDuplicateKey(err)) throw new RefusedError(`${email} already has an account (an address belongs to one user in the whole service)`);
    throw err;
  }
  return { ...toUser(row), password };
}

export async function listUsers(db: Knex, workspaceId: string): Promise<UserRecord[]> {
  const workspace = await db('workspaces').first('id').where({ id: workspaceId }).whereNull('test_of');
  if (!workspace) throw new RefusedError(`unknown workspace "${workspaceId}"`);
  const rows = (await db('users').select('id', 'workspace_id', 'email', 'name', 'role', 'created_at', 'disabled_at').where({ workspace_id: workspaceId }).orderBy([{ column: 'created_at' }, { column: 'id' }])) as UserRow[];
  return rows.map(toUser);
}

/**
 * A new generated password. Every session of the user ends in the same transaction: each
 * request reads its session from the database, so every server process refuses it at once.
 */
export async function resetPassword(db: Knex, userId: string, now = Date.now()): Promise<{ id: string; email: string; password: string }> {
  const password = generatePassword();
  const hash = await hashPassword(password);
  return transaction(db, async (trx) => {
    const user = (await trx('users').first('id', 'email').where({ id: userId }).forUpdate()) as { id: string; email: string } | undefined;
    if (!user) throw new RefusedError(`unknown user "${userId}"`);
    await trx('users').update({ password_hash: hash, updated_at: now }).where({ id: userId });
    await trx('sessions').where({ user_id: userId }).delete();
    return { id: user.id, email: user.email, password };
  });
}

/** Disables a user: it can no longer sign in, and its open sessions end at once, in every process. */
export async function disableUser(db: Knex, userId: string, now = Date.now()): Promise<{ id: string; disabled_at: string; already: boolean }> {
  return transaction(db, async (trx) => {
    const user = (await trx('users').first('id', 'disabled_at').where({ id: userId }).forUpdate()) as { id: string; disabled_at: number | null } | undefined;
    if (!user) throw new RefusedError(`unknown user "${userId}"`);
    await trx('sessions').where({ user_id: userId }).delete();
    if (user.disabled_at != null) return { id: user.id, disabled_at: iso(user.disabled_at) as string, already: true };
    await trx('users').update({ disabled_at: now, updated_at: now }).where({ id: userId });
    return { id: user.id, disabled_at: new Date(now).toISOString(), already: false };
  });
}
