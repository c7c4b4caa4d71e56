import { useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api';
import { inMode, link, mode } from '../mode';
import { UsageChart } from '../chart';
import { DeleteTestData } from './test-data';
import { Confirm, Notice, ProblemView, ShownOnce, Table, useAction, useLoad, ViewerNote, when, When } from '../ui';

type Key = Schemas['Key'];

const DAY_MS = 24 * 3600 * 1000;
/** A key expiring within this long is marked in the list. */
const SOON_MS = 7 * DAY_MS;

/** The key's state in a few words: revoked, expired, expiring soon (marked), or live. */
function status(key: Key, now = Date.now()): string {
  if (key.revoked_at) return Date.parse(key.revoked_at) > now ? `Rolled: works until ${when(key.revoked_at)}` : `Revoked ${when(key.revoked_at)}`;
  if (!key.expires_at) return 'Live';
  const left = Date.parse(key.expires_at) - now;
  if (left <= 0) return `Expired ${when(key.expires_at)}`;
  if (left <= SOON_MS) {
    // Whole days, rounded up: a key with 2 days and 23 hours left expires "in 3 days".
    const days = Math.ceil(left / DAY_MS);
    return `Expires ${left < DAY_MS ? 'within a day' : `in ${days} ${days === 1 ? 'day' : 'days'}`}`;
  }
  return 'Live';
}

/** True for a live key that stops working within 7 days: the list marks it. */
const expiringSoon = (key: Key, now = Date.now()) => !key.revoked_at && key.expires_at !== null && Date.parse(key.expires_at) > now && Date.parse(key.expires_at) - now <= SOON_MS;
const expired = (key: Key, now = Date.now()) => key.expires_at !== null && Date.parse(key.expires_at) <= now;

/** "Revoke" with its confirmation; `onRevoked` after the server has revoked it. */
function RevokeButton({ apiKey, onRevoked }: { apiKey: Key; onRevoked: (message: string) => void }) {
  const [open, setOpen] = useState(false);
  const action = useAction();
  const revoke = () =>
    action.run(async () => {
      await must(api.DELETE('/keys/{id}', { params: { path: { id: apiKey.id }, query: inMode() } }));
      setOpen(false);
      onRevoked(`Key “${apiKey.name}” (${apiKey.prefix}) is revoked: every request with it is refused from now on.`);
      return null;
    });
  return (
    <>
      <button type="button" class="danger" aria-label={`Revoke ${apiKey.name}`} onClick={() => setOpen(true)}>
        Revoke
      </button>
      <Confirm open={open} title={`Revoke “${apiKey.name}”?`} confirm="Revoke key" onConfirm={() => void revoke()} onCancel={() => setOpen(false)}>
        <p>
          Every request with <code class="whole">{apiKey.prefix}…</code> will be refused (401) at once. This cannot be undone: a program that uses it needs a new key.
        </p>
        <ProblemView problem={action.problem} />
      </Confirm>
    </>
  );
}

/** The overlaps a roll offers: how long the old token keeps working. */
const OVERLAPS = [
  { seconds: 0, label: 'None: refuse the old token at once' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 24 * 3600, label: '24 hours' },
  { seconds: 7 * 24 * 3600, label: '7 days' },
];

/** "Roll key": a new token for the same key settings, the old one ended after the chosen overlap. */
function RollButton({ apiKey, onRolled }: { apiKey: Key; onRolled: (rolled: Schemas['RolledKey']) => void }) {
  const [open, setOpen] = useState(false);
  const [overlap, setOverlap] = useState(3600);
  const action = useAction();
  const roll = () =>
    action.run(async () => {
      const rolled = await must(api.POST('/keys/{id}/roll', { params: { path: { id: apiKey.id }, query: inMode() }, body: { overlap_seconds: overlap } }));
      setOpen(false);
      onRolled(rolled);
      return null;
    });
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Roll key
      </button>
      <Confirm open={open} title={`Roll “${apiKey.name}”?`} confirm="Roll key" onConfirm={() => void roll()} onCancel={() => setOpen(false)}>
        <p>
          A new token is made with the same name, scopes and rate limit. Programs that use <code class="whole">{apiKey.prefix}…</code> need the new token before the old one stops working.
        </p>
        <label>
          The old token keeps working for
          <select value={overlap} onChange={(e) => setOverlap(Number(e.currentTarget.value))}>
            {OVERLAPS.map((o) => (
              <option key={o.seconds} value={o.seconds}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <ProblemView problem={action.problem} />
      </Confirm>
    </>
  );
}

type Versions = Schemas['VersionList'];

/** What moving a pin from `version` to the latest changes: each later version and its changes. */
function ChangesSince({ versions, version }: { versions: Versions; version: string }) {
  const later = versions.data.filter((v) => v.version > version);
  return (
    <ul class="changes">
      {later.map((v) => (
        <li key={v.version}>
          <strong>{v.version}</strong>
          {v.changes.length === 0 ? ': nothing a request or an answer shows.' : ''}
          <ul>
            {v.changes.map((c, i) => (
              <li key={i}>
                {c.resource ? <code>{c.resource}</code> : 'The API'}: {c.description}
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ul>
  );
}

/** A key's API version; for an older one, what changed since and (for an admin) "Upgrade" with its confirmation. */
function KeyVersion({ apiKey, admin, onUpgraded }: { apiKey: Key; admin: boolean; onUpgraded: (message: string) => void }) {
  const versions = useLoad(() => must(api.GET('/versions')), []);
  const [open, setOpen] = useState(false);
  const action = useAction();
  const latest = versions.data?.latest;
  const upgrade = () =>
    action.run(async () => {
      if (!latest) return null;
      await must(api.PATCH('/keys/{id}', { params: { path: { id: apiKey.id }, query: inMode() }, body: { api_version: latest } }));
      setOpen(false);
      onUpgraded(`Key “${apiKey.name}” now answers in API version ${latest}: requests without an Api-Version header get its shapes from now on.`);
      return null;
    });
  return (
    <section aria-label="API version">
      <h2>API version</h2>
      <ProblemView problem={versions.problem} />
      <p>
        Requests with this key are answered in <strong>{apiKey.api_version}</strong>
        {latest && (apiKey.api_version === latest ? ', the latest version.' : `; the latest is ${latest}.`)} A request may ask for another with the <code>Api-Version</code> header.
      </p>
      {versions.data && latest && apiKey.api_version < latest && (
        <>
          <p>Moving it to {latest} changes:</p>
          <ChangesSince versions={versions.data} version={apiKey.api_version} />
          {admin && !apiKey.revoked_at && (
            <button type="button" onClick={() => setOpen(true)}>
              Upgrade to {latest}
            </button>
          )}
          <Confirm open={open} title={`Upgrade “${apiKey.name}” to ${latest}?`} confirm={`Upgrade to ${latest}`} onConfirm={() => void upgrade()} onCancel={() => setOpen(false)}>
            <p>Programs that use this key get the {latest} shapes from their next request on. Check that they handle the changes above first; a program can try them beforehand by sending <code>Api-Version: {latest}</code>.</p>
            <ProblemView problem={action.problem} />
          </Confirm>
        </>
      )}
    </section>
  );
}

/** "3 of 20 keys", from the plan, and the workspace's key lifetime when it has one. */
function KeyCap() {
  const { data } = useLoad(() => must(api.GET('/workspace', { params: { query: inMode() } })), []);
  if (!data) return null;
  return (
    <p>
      {data.usage.live_keys} of {data.plan.max_keys} {data.mode === 'test' ? 'test keys (counted apart from live keys)' : 'keys'} on the {data.plan.name} plan.
      {data.max_key_lifetime_days !== null && ` Every new key must expire within ${data.max_key_lifetime_days} ${data.max_key_lifetime_days === 1 ? 'day' : 'days'}.`}
    </p>
  );
}

export function KeysPage({ admin }: { admin: boolean }) {
  const [pages, setPages] = useState<Key[][]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  const { problem } = useLoad(async () => {
    const page = await must(api.GET('/keys', { params: { query: { ...inMode(), limit: 50 } } }));
    setPages([page.data]);
    setCursor(page.next_cursor);
    return page;
  }, [round]);
  const more = useAction();
  const loadMore = () =>
    more.run(async () => {
      const page = await must(api.GET('/keys', { params: { query: { ...inMode(), limit: 50, ...(cursor ? { cursor } : {}) } } }));
      setPages((p) => [...p, page.data]);
      setCursor(page.next_cursor);
      return null;
    });
  const keys = pages.flat();
  return (
    <>
      <h1>API keys</h1>
      <KeyCap key={round} />
      {admin ? (
        <p>
          <a class="button" href={link('keys/new')}>
            Create key
          </a>
        </p>
      ) : (
        <ViewerNote />
      )}
      <Notice text={notice} />
      <ProblemView problem={problem} />
      {keys.length === 0 && !problem ? (
        <p>No keys yet.</p>
      ) : (
        <Table caption="API keys" columns={['Name', 'Prefix', 'Scopes', 'Rate limit', 'API version', 'Created', 'Last used', 'Expires', 'Status', ...(admin ? ['Actions'] : [])]}>
            {keys.map((key) => (
              <tr key={key.id} class={key.revoked_at || expired(key) ? 'revoked' : expiringSoon(key) ? 'expiring' : undefined}>
                <td>
                  <a href={link(`keys/${key.id}`)}>{key.name}</a>
                </td>
                <td>
                  <code class="whole">{key.prefix}…</code>
                </td>
                <td>{key.scopes.join(', ')}</td>
                <td>{key.rate_limit}/min</td>
                <td>{key.api_version}</td>
                <td><When at={key.created_at} /></td>
                <td><When at={key.last_used_at} /></td>
                <td>{key.expires_at ? <When at={key.expires_at} /> : 'Never'}</td>
                <td>{expiringSoon(key) ? <strong class="soon">{status(key)}</strong> : status(key)}</td>
                {admin && (
                  <td>
                    {!key.revoked_at && (
                      <RevokeButton
                        apiKey={key}
                        onRevoked={(message) => {
                          setNotice(message);
                          setRound((r) => r + 1);
                        }}
                      />
                    )}
                  </td>
                )}
              </tr>
            ))}
        </Table>
      )}
      {cursor && (
        <button type="button" disabled={more.busy} onClick={() => void loadMore()}>
          Show more keys
        </button>
      )}
      <ProblemView problem={more.problem} />
      {admin && mode() === 'test' && <DeleteTestData />}
    </>
  );
}

export function KeyPage({ id, admin }: { id: string; admin: boolean }) {
  const [notice, setNotice] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  // The key list is the only read of a key: look for it page by page.
  const key = useLoad(async () => {
    let cursor: string | undefined;
    for (;;) {
      const page = await must(api.GET('/keys', { params: { query: { ...inMode(), limit: 100, ...(cursor ? { cursor } : {}) } } }));
      const found = page.data.find((k) => k.id === id);
      if (found) return found;
      if (!page.next_cursor) return null;
      cursor = page.next_cursor;
    }
  }, [id, round]);
  const usage = useLoad(() => must(api.GET('/usage', { params: { query: { ...inMode(), key_id: id } } })), [id]);
  const [rolled, setRolled] = useState<Schemas['RolledKey'] | null>(null);
  const k = key.data;
  if (rolled) {
    return (
      <>
        <h1>Key “{rolled.name}” rolled</h1>
        <ShownOnce label="New token" value={rolled.token} warning="Copy the new token now and keep it somewhere safe: it will not be shown again." />
        <p>
          The old token works until <When at={rolled.replaces.revoked_at} />, then every request with it is refused. Scopes: {rolled.scopes.join(', ')}; {rolled.rate_limit} requests a minute.
        </p>
        <p>
          <a href={link(`keys/${rolled.id}`)} onClick={() => setRolled(null)}>
            Done: the new key
          </a>
        </p>
      </>
    );
  }
  return (
    <>
      <p>
        <a href={link('keys')}>← API keys</a>
      </p>
      <h1>{k ? `Key “${k.name}”` : 'Key'}</h1>
      <Notice text={notice} />
      <ProblemView problem={key.problem} />
      {k === null && <p>There is no key {id} in this workspace.</p>}
      {k && (
        <>
          <dl class="facts">
            <dt>Prefix</dt>
            <dd>
              <code class="whole">{k.prefix}…</code>
            </dd>
            <dt>Scopes</dt>
            <dd>{k.scopes.join(', ')}</dd>
            <dt>Rate limit</dt>
            <dd>{k.rate_limit} requests a minute</dd>
            <dt>Created</dt>
            <dd>
              <When at={k.created_at} />
              {k.created_by ? ` ${createdBy(k.created_by)}` : ''}
            </dd>
            <dt>Last used</dt>
            <dd><When at={k.last_used_at} /></dd>
            <dt>Expires</dt>
            <dd>{k.expires_at ? <When at={k.expires_at} /> : 'Never: it works until revoked'}</dd>
            <dt>Allowed from</dt>
            <dd>{k.allowed_ips ? k.allowed_ips.join(', ') : 'Any address'}</dd>
            <dt>API version</dt>
            <dd>{k.api_version}</dd>
            <dt>Status</dt>
            <dd>{status(k)}</dd>
          </dl>
          {admin && !k.revoked_at && !expired(k) && <RollButton apiKey={k} onRolled={setRolled} />}{' '}
          {admin && (!k.revoked_at || Date.parse(k.revoked_at) > Date.now()) && (
            <RevokeButton
              apiKey={k}
              onRevoked={(message) => {
                setNotice(message);
                setRound((r) => r + 1);
              }}
            />
          )}
          <KeyVersion
            apiKey={k}
            admin={admin}
            onUpgraded={(message) => {
              setNotice(message);
              setRound((r) => r + 1);
            }}
          />
          <h2>Requests</h2>
          <p>
            <a href={link(`keys/${k.id}/requests`)}>Request log and errors</a>: every request made with this key, and its errors by status and code.
          </p>
          <ProblemView problem={usage.problem} />
          {usage.data && <UsageChart buckets={usage.data.data} now={Date.now()} />}
        </>
      )}
    </>
  );
}

/** The scopes grouped by resource, write scopes unavailable (and why) when the plan forbids them. */
function ScopePicker({ scopes, chosen, onChange, plan }: { scopes: Array<Schemas['ScopeAllowedList']['data'][number]>; chosen: Set<string>; onChange: (next: Set<string>) => void; plan: Schemas['Workspace']['plan'] | undefined }) {
  const groups = new Map<string, typeof scopes>();
  for (const s of scopes) groups.set(s.resource, [...(groups.get(s.resource) ?? []), s]);
  const forbidden = scopes.some((s) => !s.allowed);
  const toggle = (name: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(name);
    else next.delete(name);
    onChange(next);
  };
  return (
    <fieldset>
      <legend>Scopes</legend>
      {forbidden && (
        <p id="scopes-forbidden" class="warning">
          The {plan?.name ?? 'current'} plan allows {plan?.api_access === 'read_only' ? 'read access only' : 'only some scopes'}: the scopes shown unavailable need a plan with write access. An operator can change the plan.
        </p>
      )}
      <div class="scope-groups">
        {[...groups].map(([resource, list]) => (
          <fieldset key={resource} class="scope-group">
            <legend>{resource}</legend>
            {list.map((s) => (
              <label key={s.name} class={s.allowed ? undefined : 'unavailable'}>
                <input type="checkbox" name="scopes" value={s.name} checked={chosen.has(s.name)} disabled={!s.allowed} aria-describedby={s.allowed ? undefined : 'scopes-forbidden'} onChange={(e) => toggle(s.name, e.currentTarget.checked)} />
                {s.name}
                <span class="muted"> {s.description}</span>
              </label>
            ))}
          </fieldset>
        ))}
      </div>
    </fieldset>
  );
}

export function NewKeyPage({ admin }: { admin: boolean }) {
  const scopes = useLoad(() => must(api.GET('/scopes')), []);
  const workspace = useLoad(() => must(api.GET('/workspace', { params: { query: inMode() } })), []);
  const versions = useLoad(() => must(api.GET('/versions')), []);
  // Empty: the latest.
  const [apiVersion, setApiVersion] = useState('');
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [rateLimit, setRateLimit] = useState('60');
  // Empty: no expiry (allowed only when the workspace sets no lifetime).
  const [expiresInDays, setExpiresInDays] = useState('');
  // Empty: any address.
  const [allowedIps, setAllowedIps] = useState('');
  const [created, setCreated] = useState<Schemas['KeyWithToken'] | null>(null);
  const action = useAction();

  if (!admin) {
    return (
      <>
        <h1>Create key</h1>
        <ViewerNote />
      </>
    );
  }
  if (created) {
    return (
      <>
        <h1>Key “{created.name}” created</h1>
        <ShownOnce label="Token" value={created.token} warning="Copy this token now and keep it somewhere safe: it will not be shown again. Only its prefix is stored in a form that can be read." />
        <p>
          Send it as <code>Authorization: Bearer &lt;token&gt;</code> to <code>/v1</code>. Scopes: {created.scopes.join(', ')}; {created.rate_limit} requests a minute; API version {created.api_version}.
          {created.expires_at ? <> It expires <When at={created.expires_at} />.</> : ' It works until revoked.'}
        </p>
        <p>
          <a href={link('keys')}>Done: back to API keys</a>
        </p>
      </>
    );
  }
  const lifetime = workspace.data?.max_key_lifetime_days ?? null;
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      if (chosen.size === 0) throw new Error('Choose at least one scope.');
      const addresses = allowedIps.split(/[\s,]+/).filter(Boolean);
      const key = await must(api.POST('/keys', { body: { mode: mode(), name: name.trim(), scopes: [...chosen], rate_limit: Number(rateLimit), ...(expiresInDays.trim() ? { expires_in_days: Number(expiresInDays) } : {}), ...(addresses.length > 0 ? { allowed_ips: addresses } : {}), ...(apiVersion ? { api_version: apiVersion } : {}) } }));
      setCreated(key);
      return null;
    });
  };
  return (
    <>
      <p>
        <a href={link('keys')}>← API keys</a>
      </p>
      <h1>Create key</h1>
      <ProblemView problem={scopes.problem ?? workspace.problem} />
      <form onSubmit={submit}>
        <label>
          Name
          <input type="text" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="e.g. CRM sync" />
        </label>
        {scopes.data && <ScopePicker scopes={scopes.data.data} chosen={chosen} onChange={setChosen} plan={workspace.data?.plan} />}
        <label>
          Rate limit (requests a minute, 1-6000)
          <input type="number" required min={1} max={6000} step={1} value={rateLimit} onInput={(e) => setRateLimit(e.currentTarget.value)} />
        </label>
        <label>
          Expires in (days{lifetime === null ? '; empty: never' : `, 1-${lifetime}`})
          <input type="number" required={lifetime !== null} min={1} max={lifetime ?? 3650} step={1} value={expiresInDays} onInput={(e) => setExpiresInDays(e.currentTarget.value)} />
        </label>
        <label>
          Allowed IP addresses (optional: addresses or CIDR ranges, separated by commas or lines; empty: any address)
          <textarea rows={3} value={allowedIps} onInput={(e) => setAllowedIps(e.currentTarget.value)} placeholder="203.0.113.7, 2001:db8::/32" />
        </label>
        <label>
          API version (what its requests are answered in)
          <select value={apiVersion} onChange={(e) => setApiVersion(e.currentTarget.value)}>
            <option value="">The latest{versions.data ? ` (${versions.data.latest})` : ''}</option>
            {versions.data?.data
              .filter((v) => v.version !== versions.data?.latest)
              .reverse()
              .map((v) => (
                <option key={v.version} value={v.version}>
                  {v.version}
                </option>
              ))}
          </select>
        </label>
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Creating…' : 'Create key'}
        </button>
      </form>
      <ProblemView problem={action.problem instanceof Error && !('code' in action.problem) ? action.problem.message : action.problem} labels={KEY_FIELDS} />
    </>
  );
}

/** The create form's fields, as its labels name them: where a refusal's field errors point. */
const KEY_FIELDS = { name: 'Name', scopes: 'Scopes', rate_limit: 'Rate limit', expires_in_days: 'Expires in', allowed_ips: 'Allowed IP addresses', api_version: 'API version' };

/** Who made a key, as a sentence ends: "by ada@example.com", "by the admin command", "by the demo set-up". */
function createdBy(actor: Schemas['Actor']): string {
  return actor.type === 'user' ? `by ${actor.label}` : `by the ${actor.label}`;
}
