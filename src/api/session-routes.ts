import type Cookies from 'cookies';
import { dummyHash } from '../admin/passwords.js';
import { ABSOLUTE_MS, endSession, SESSION_COOKIE, signIn } from '../admin/sessions.js';
import { type Route, route, type RouteInput, signedIn } from '../http/route.js';
import { ref } from '../openapi/operation.js';
import { SIGN_IN_SCHEMA } from '../openapi/internal.js';

/**
 * Sets the cookie that carries a session (`null`: clears it), through Koa's cookies: never
 * readable by scripts, never sent by another site, and Secure whenever the request came over
 * https or COOKIE_SECURE=true (TLS ends in front of the service).
 */
function setSessionCookie(input: RouteInput, token: string | null): void {
  const secure = input.deps.config.cookieSecure || input.secure;
  const cookies = cookiesOf(input);
  // The cookies module refuses Secure on a connection it takes for plain http; here the operator said otherwise.
  cookies.secure = secure;
  cookies.set(SESSION_COOKIE, token, { path: '/', httpOnly: true, sameSite: 'strict', secure, overwrite: true, ...(token ? { maxAge: ABSOLUTE_MS } : {}) });
}

function cookiesOf(input: RouteInput): Cookies {
  if (!input.cookies) throw new Error('the session routes are mounted on an API without sessions');
  return input.cookies;
}

const sessionBody = (input: RouteInput) => {
  const { user, workspace } = signedIn(input);
  return { user, workspace };
};

/** Signing in and out of the administration area (docs/reference.md section 10). */
export function sessionRoutes(): Route[] {
  // Ready before the first sign-in with an unknown email, whose answer must take no longer than another's.
  void dummyHash();
  const session = { tag: 'session', errors: ['invalid_parameter'] as const };
  return [
    route({
      ...session,
      method: 'post',
      path: '/session',
      operationId: 'signIn',
      summary: 'Sign in',
      description:
        'Opens a session and sets it as the `ws_session` cookie (HttpOnly, SameSite=Strict; Secure when the request came over https (a TLS connection, or X-Forwarded-Proto: https behind TRUST_PROXY=true) and always with COOKIE_SECURE=true). A session ends after 12 hours without use and after 7 days in any case. A wrong email and a wrong password get the same answer. More than 10 failures in 15 minutes from one address (for one email or many) are answered 429 with Retry-After; failures for one email from many addresses make addresses that failed wait longer and longer (1 s, doubling, up to a minute), while an address without failures signs in at once.',
      access: 'public',
      body: { schema: SIGN_IN_SCHEMA, ref: ref('SignIn') },
      success: { status: 200, description: 'Signed in.', schema: ref('Session'), headers: { 'Set-Cookie': { description: 'The session cookie.', schema: { type: 'string' }, required: true } } },
      errors: ['invalid_parameter', 'invalid_credentials', 'rate_limited'],
      handle: async (input) => {
        const body = input.body;
        const { token, context } = await signIn(input.deps.db, { email: body.email, password: body.password, ip: input.ip }, input.deps.clock.now());
        setSessionCookie(input, token);
        return { headers: { 'Cache-Control': 'no-store' }, body: { user: context.user, workspace: context.workspace } };
      },
    }),
    {
      ...session,
      method: 'get',
      path: '/session',
      operationId: 'getSession',
      summary: 'Who is signed in',
      access: null,
      success: { status: 200, description: 'The signed-in user and their workspace.', schema: ref('Session') },
      handle: (input) => ({ body: sessionBody(input) }),
    },
    {
      ...session,
      method: 'delete',
      path: '/session',
      operationId: 'signOut',
      summary: 'Sign out',
      description: 'Ends the session on the server (its cookie opens nothing any more) and clears the cookie. Answers 204 even when no session was open.',
      access: 'public',
      success: { status: 204, description: 'Signed out.' },
      handle: async (input) => {
        await endSession(input.deps.db, cookiesOf(input).get(SESSION_COOKIE) ?? '');
        setSessionCookie(input, null);
        return { status: 204 };
      },
    },
  ];
}
