import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, must, onSignedOut, type Session } from './api';
import { AuditPage } from './pages/audit';
import { EventsPage } from './pages/events';
import { KeyRequestsPage } from './pages/key-requests';
import { KeyPage, KeysPage, NewKeyPage } from './pages/keys';
import { SignIn } from './pages/sign-in';
import { DeliveryPage, NewWebhookPage, WebhookPage, WebhooksPage } from './pages/webhooks';
import { ProblemView } from './ui';
import { link, type Mode, setMode } from './mode';

/** The page's place: the URL's fragment (`#/keys/key_...`, `#/test/keys/key_...` in test mode), so the server serves one document. */
function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = () => {
      setRoute(read());
      document.getElementById('main')?.focus();
    };
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

const SECTIONS = [
  { path: 'keys', label: 'API keys' },
  { path: 'webhooks', label: 'Webhooks' },
  { path: 'events', label: 'Events' },
  { path: 'audit', label: 'Audit log' },
];

/** The route without its mode, and the mode: `test/keys/x` is the test mode's `keys/x`. */
function modeOf(route: string[]): { mode: Mode; rest: string[] } {
  return route[0] === 'test' ? { mode: 'test', rest: route.slice(1) } : { mode: 'live', rest: route };
}

/**
 * The Live / Test switch: it shows the same section in the other mode (an object of one mode is
 * not in the other, so it goes to the section's list).
 */
function ModeSwitch({ mode, section }: { mode: Mode; section: string }) {
  const other: Mode = mode === 'test' ? 'live' : 'test';
  return (
    <button type="button" role="switch" aria-checked={mode === 'test'} class="mode-switch" onClick={() => (location.hash = link(section, other))}>
      Test mode
    </button>
  );
}

function Page({ route, session }: { route: string[]; session: Session }) {
  const admin = session.user.role === 'admin';
  const [section = 'keys', id, sub, subId] = route;
  if (section === 'keys') {
    if (id === 'new') return <NewKeyPage admin={admin} />;
    if (id && sub === 'requests') return <KeyRequestsPage id={id} />;
    if (id) return <KeyPage id={id} admin={admin} />;
    return <KeysPage admin={admin} />;
  }
  if (section === 'webhooks') {
    if (id === 'new') return <NewWebhookPage admin={admin} />;
    if (id && sub === 'deliveries' && subId) return <DeliveryPage webhookId={id} deliveryId={subId} admin={admin} />;
    if (id) return <WebhookPage id={id} admin={admin} />;
    return <WebhooksPage admin={admin} />;
  }
  if (section === 'events') return <EventsPage />;
  if (section === 'audit') return <AuditPage />;
  return (
    <>
      <h1>Not found</h1>
      <p>
        There is no page here. <a href={link('keys')}>Go to API keys</a>.
      </p>
    </>
  );
}

function App() {
  const route = useRoute();
  // undefined: not known yet; null: signed out.
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [reason, setReason] = useState<string | null>(null);
  const [problem, setProblem] = useState<unknown>(null);

  useEffect(() => {
    onSignedOut(() => {
      setSession(null);
      setReason('Your session has ended. Sign in again to go back to where you were.');
    });
    api.GET('/session').then(
      ({ data }) => setSession(data ?? null),
      (error: unknown) => {
        setProblem(error);
        setSession(null);
      },
    );
  }, []);

  const signOut = async () => {
    try {
      await must(api.DELETE('/session'));
    } catch (error) {
      setProblem(error);
      return;
    }
    setSession(null);
    setReason('You are signed out.');
    // The page a person left is not kept in the history's current entry.
    history.replaceState(null, '', '#/');
  };

  if (session === undefined) return <p role="status">Loading…</p>;
  if (session === null) {
    return (
      <SignIn
        reason={reason}
        onSignedIn={(s) => {
          setSession(s);
          setReason(null);
        }}
      />
    );
  }
  const { mode, rest } = modeOf(route);
  setMode(mode);
  const [section = 'keys'] = rest;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header>
        <p class="brand">Workspace API · Developer</p>
        <p class="who">
          {session.workspace.name} ({session.workspace.plan}) · {session.user.email} · {session.user.role}
        </p>
        <ModeSwitch mode={mode} section={section} />
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      {mode === 'test' && (
        <p class="test-banner" role="status">
          Test mode: the keys, webhooks, deliveries, requests and usage shown are test data, apart from live data.
        </p>
      )}
      <nav aria-label="Developer">
        <ul>
          {SECTIONS.map((s) => (
            <li key={s.path}>
              <a href={link(s.path)} aria-current={section === s.path ? 'page' : undefined}>
                {s.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <ProblemView problem={problem} />
        {/* A new mode is a new page: nothing loaded in the other mode is kept. */}
        <Page key={mode} route={rest} session={session} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
