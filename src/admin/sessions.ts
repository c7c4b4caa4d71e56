import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { recordAudit } from '../audit/log.js';
import { hashToken } from '../auth/tokens.js';
import { asNumber } from '../db/decode.js';
import { transaction } from '../db/dialects/index.js';
import { ApiError } from '../common/errors.js';
import { actorOfUser, type SessionContext } from '../common/who.js';
import { dummyHash, verifyPassword } from './passwords.js';
import { normalizeEmail, type Role } from './users.js';
import { count } from '../common/words.js';

export const SESSION_COOKIE = 'ws_session';
/** A session ends after this long without a request... */
export const IDLE_MS = 12 * 60 * 60 * 1000;
/** ...and after this long in any case. */
export const ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** last_seen_at is written at most this often per session: idle expiry needs no finer grain. */
const TOUCH_EVERY_MS = 60_000;

/** More than this many failed sign-ins within the window from one address (for any email, so for one email too): 429. */
export const MAX_FAILURES = 10;
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
/**
 * Past this many failures for one email (from any addresses) within the window, a sign-in for
 * it from an address that has failed itself waits, after the email's last failure, 1 s, then
 * 2, 4... up to SLOWEST_MS: many addresses slow the guessing of one email down, and never
 * lock out its owner, whose address has no failures.
 */
const SLOW_AFTER = 10;
const SLOWEST_MS = 60_000;
const SLOW_ROWS = SLOW_AFTER + Math.ceil(Math.log2(SLOWEST_MS / 1000));

const SESSION_SHAPE = /^[A-Za-z0-9_-]{43}$/;

interface UserRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  password_hash: string;
  disabled_at: number | string | null;
  workspace_id: string;
  workspace_name: string;
  plan: string;
}

const USER_COLUMNS = ['u.id', 'u.email', 'u.name', 'u.role', 'u.password_hash', 'u.disabled_at', 'w.id as workspace_id', 'w.name as workspace_name', 'w.plan'];

const usersWithWorkspace = (db: Knex | Knex.Transaction) => db('users as u').join('workspaces as w', 'w.id', 'u.workspace_id');

const toContext = (row: UserRow, sessionHash: string): SessionContext => ({
  user: { id: row.id, email: row.email, name: row.name, role: row.role },
  workspace: { id: row.workspace_id, name: row.workspace_name, plan: row.plan },
  sessionHash,
});

const tooMany = (detail: string, waitMs: number) => {
  const wait = Math.max(1, Math.ceil(waitMs / 1000));
  const when = wait < 120 ? count(wait, 'second', 'seconds') : count(Math.ceil(wait / 60), 'minute', 'minutes');
  return new ApiError('rate_limited', `${detail}; try again in ${when}.`, { headers: { 'Retry-After': String(wait) } });
};

/**
 * Refuses a sign-in while its address has failed too often lately (for any email, so for this
 * one too), or while the email is being guessed from many addresses and this address is one
 * that has failed (docs/reference.md section 10); says when to try again. An address without failures is
 * never refused: the owner of an email under attack still signs in.
 */
async function throttle(db: Knex, ip: string, email: string, now: number): Promise<void> {
  const since = now - FAILURE_WINDOW_MS;
  const fromAddress = (await db('sign_in_failures').select('at').where('ip', ip).where('at', '>', since).orderBy('at', 'desc').limit(MAX_FAILURES)) as Array<{ at: number | string }>;
  if (fromAddress.length >= MAX_FAILURES) {
    throw tooMany('Too many failed sign-ins from this address', asNumber(fromAddress[fromAddress.length - 1]?.at) + FAILURE_WINDOW_MS - now);
  }
  if (fromAddress.length === 0) return;
  const forEmail = (await db('sign_in_failures').select('at').where('email', email).where('at', '>', since).orderBy('at', 'desc').limit(SLOW_ROWS)) as Array<{ at: number | string }>;
  if (forEmail.length < SLOW_AFTER) return;
  const delay = Math.min(SLOWEST_MS, 1000 * 2 ** (forEmail.length - SLOW_AFTER));
  const wait = asNumber(forEmail[0]?.at) + delay - now;
  if (wait > 0) throw tooMany('Too many failed sign-ins for this email, from several addresses', wait);
}

/**
 * Signs a person in: a new random session (its SHA-256 stored, the value only in the cookie). A
 * wrong password, an unknown email and a disabled user get the same answer after the same work
 * (one scrypt), so neither the answer nor its time tells which addresses have an account.
 */
export async function signIn(db: Knex, input: { email: string; password: string; ip: string }, now: number): Promise<{ token: string; context: SessionContext }> {
  const email = normalizeEmail(input.email);
  await throttle(db, input.ip, email, now);
  const row = (await usersWithWorkspace(db).first(USER_COLUMNS).where('u.email', email)) as UserRow | undefined;
  const matches = await verifyPassword(input.password, row?.password_hash ?? (await dummyHash()));
  if (!row || !matches || row.disabled_at != null) {
    await transaction(db, async (trx) => {
      await trx('sign_in_failures').insert({ ip: input.ip.slice(0, 64), email: email.slice(0, 254), at: now });
      if (row) {
        const reason = row.disabled_at != null ? 'user disabled' : 'wrong password';
        await recordAudit(trx, { actor: actorOfUser(row), ip: input.ip }, { workspaceId: row.workspace_id, action: 'user.sign_in_failed', target: { type: 'user', id: row.id }, details: { reason } }, now);
      }
    });
    throw new ApiError('invalid_credentials', 'The email or the password is wrong.');
  }
  const token = randomBytes(32).toString('base64url');
  const sessionHash = hashToken(token);
  await transaction(db, async (trx) => {
    await trx('sessions').insert({ id_hash: sessionHash, user_id: row.id, created_at: now, last_seen_at: now });
    await recordAudit(trx, { actor: actorOfUser(row), ip: input.ip }, { workspaceId: row.workspace_id, action: 'user.signed_in', target: { type: 'user', id: row.id } }, now);
  });
  return { token, context: toContext(row, sessionHash) };
}

/**
 * The session a cookie names, if it is still open: not signed out, used within the idle limit,
 * younger than the absolute one, its user not disabled. Read from the database on every
 * request, so an ended session is refused by every process at once.
 */
export async function findSession(db: Knex, token: string, now: number): Promise<SessionContext | null> {
  if (!SESSION_SHAPE.test(token)) return null;
  const sessionHash = hashToken(token);
  const row = (await usersWithWorkspace(db)
    .join('sessions as s', 's.user_id', 'u.id')
    .first([...USER_COLUMNS, 's.created_at as session_created_at', 's.last_seen_at'])
    .where('s.id_hash', sessionHash)) as (UserRow & { session_created_at: number | string; last_seen_at: number | string }) | undefined;
  if (!row) return null;
  const lastSeen = asNumber(row.last_seen_at);
  if (row.disabled_at != null || now - lastSeen >= IDLE_MS || now - asNumber(row.session_created_at) >= ABSOLUTE_MS) {
    await db('sessions').where({ id_hash: sessionHash }).delete();
    return null;
  }
  if (now - lastSeen >= TOUCH_EVERY_MS) await db('sessions').update({ last_seen_at: now }).where({ id_hash: sessionHash });
  return toContext(row, sessionHash);
}

/** Ends a session on the server: its cookie opens nothing any more, anywhere. */
export async function endSession(db: Knex, token: string): Promise<void> {
  if (SESSION_SHAPE.test(token)) await db('sessions').where({ id_hash: hashToken(token) }).delete();
}

/** Housekeeping: sessions past either limit, and failures past the throttling window. */
export async function sweepSessions(db: Knex, now: number): Promise<number> {
  const sessions = await db('sessions').where('last_seen_at', '<', now - IDLE_MS).orWhere('created_at', '<', now - ABSOLUTE_MS).delete();
  const failures = await db('sign_in_failures').where('at', '<', now - FAILURE_WINDOW_MS).delete();
  return sessions + failures;
}

