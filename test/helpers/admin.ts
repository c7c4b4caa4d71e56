import { expect } from 'chai';
import { createUser } from '../../src/admin/users.js';
import { createWorkspace } from '../../src/auth/keys.js';
import type { TestApp } from './app.js';

let addresses = 0;

/** A client address of its own (sent as X-Forwarded-For, the app trusting it), so throttling of one test never reaches another. */
export function newAddress(): string {
  addresses += 1;
  return `10.77.${(addresses >> 8) & 255}.${addresses & 255}`;
}

export interface Person {
  workspaceId: string;
  userId: string;
  email: string;
  password: string;
  cookie: string;
  ip: string;
}

export interface InternalOptions {
  method?: string;
  json?: unknown;
  /** The session cookie ("ws_session=..."); none when omitted. */
  cookie?: string;
  /** Origin: the app's own by default on every request; null sends none. */
  origin?: string | null;
  ip?: string;
  headers?: Record<string, string>;
}

/** A request to the internal API, held to the internal document like every answer of the app. */
export function internal(app: TestApp, path: string, options: InternalOptions = {}): Promise<Response> {
  const { method = 'GET', json, cookie, origin = app.url, ip, headers = {} } = options;
  return app.request(`/internal/v1${path}`, {
    method,
    ...(json !== undefined ? { json } : {}),
    headers: { ...(cookie ? { cookie } : {}), ...(origin !== null ? { origin } : {}), ...(ip ? { 'x-forwarded-for': ip } : {}), ...headers },
  });
}

/** `ws_session=...` from a sign-in answer. */
export function sessionCookie(res: Response): string {
  const set = res.headers.get('set-cookie') ?? '';
  const value = /^ws_session=([^;]*)/.exec(set)?.[1];
  expect(value, `Set-Cookie: ${set}`).to.be.a('string').with.length.greaterThan(0);
  return `ws_session=${value}`;
}

export async function signIn(app: TestApp, email: string, password: string, ip = newAddress()): Promise<string> {
  const res = await internal(app, '/session', { method: 'POST', json: { email, password }, ip });
  expect(res.status, await res.clone().text()).to.equal(200);
  return sessionCookie(res);
}

let people = 0;

/** A user (of a new workspace on `plan`, or of `workspaceId`), signed in. */
export async function person(app: TestApp, options: { plan?: string; role?: 'admin' | 'viewer'; workspaceId?: string } = {}): Promise<Person> {
  const { plan = 'pro', role = 'admin' } = options;
  const workspaceId = options.workspaceId ?? (await createWorkspace(app.deps.db, { name: `admin test ${plan}`, plan })).id;
  people += 1;
  const user = await createUser(app.deps.db, { workspace: workspaceId, email: `person${people}.${Date.now().toString(36)}@example.com`, role });
  const ip = newAddress();
  const cookie = await signIn(app, user.email, user.password, ip);
  return { workspaceId, userId: user.id, email: user.email, password: user.password, cookie, ip };
}
