/**
 * Who acts, in one place: the caller of a request (an API key, or a person signed in to the
 * administration area), and who a change is recorded as having been made by.
 */

/** Who made a change: a person signed in, an API key, an operator's command, or the service itself. */
export interface Actor {
  type: 'user' | 'api_key' | 'operator' | 'system';
  id: string | null;
  label: string;
}

/** The actor and the client address of a change: what every audited operation is given (audit/log.ts). */
export interface AuditContext {
  actor: Actor;
  ip: string | null;
}

/** The workspace acting, the actor to audit, and the client's address: the same for both doors. */
export interface Who extends AuditContext {
  workspace: { id: string; name: string; plan: string };
}

/** Who is calling: the key, its workspace, and the scopes it may use now. */
export interface AuthContext {
  /**
   * `expires_at`: epoch milliseconds, or null for a key that lives until revoked; `revokes_at`:
   * when a rolled key's overlap ends (null for any other key); `api_version`: the version it is
   * pinned to (docs/reference.md section 19).
   */
  key: { id: string; name: string; prefix: string; scopes: string[]; rate_limit: number; api_version: string; expires_at: number | null; revokes_at: number | null };
  workspace: { id: string; name: string; plan: string };
  /** The key's scopes that its workspace's plan allows now. */
  scopes: ReadonlySet<string>;
  /** Whether a client address may use the key (its allowlist); null: any address. */
  allows: ((address: string) => boolean) | null;
}

/** Who is signed in to the administration area: the person, their workspace, and the session (by its hash). */
export interface SessionContext {
  user: { id: string; email: string; name: string; role: 'admin' | 'viewer' };
  workspace: { id: string; name: string; plan: string };
  sessionHash: string;
}

/** A signed-in person as the audit log names them. */
export const actorOfUser = (user: SessionContext['user']): Actor => ({ type: 'user', id: user.id, label: user.email });

/** The authenticated caller: every route of the public API runs behind authentication, so it is there. */
export function authenticated(auth: AuthContext | undefined): AuthContext {
  if (!auth) throw new Error('route reached without authentication');
  return auth;
}
