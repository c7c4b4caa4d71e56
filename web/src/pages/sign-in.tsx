import { useState } from 'preact/hooks';
import { api, must, Problem, type Session } from '../api';
import { ProblemView } from '../ui';

/** Why sign-in failed, and what to do about it. */
function explain(error: unknown): unknown {
  if (!(error instanceof Problem)) return error;
  if (error.code === 'invalid_credentials') return new Problem(error.status, error.code, 'That email and password do not match an account. Check both and try again; an operator can reset a forgotten password.');
  return error;
}

export function SignIn({ reason, onSignedIn }: { reason: string | null; onSignedIn: (session: Session) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<unknown>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      // A 429's detail says how long to wait (from its Retry-After); a lost connection is a Problem too.
      onSignedIn(await must(api.POST('/session', { body: { email, password } })));
    } catch (error) {
      setProblem(explain(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <h1>Sign in</h1>
      <p class="muted">Workspace API · Developer: API keys, webhooks, events and the audit log of your workspace.</p>
      {reason && (
        <p class="notice" role="status">
          {reason}
        </p>
      )}
      <ProblemView problem={problem} />
      <form onSubmit={(e) => void submit(e)}>
        <label>
          Email
          <input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input type="password" name="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
