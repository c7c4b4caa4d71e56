import { useState } from 'preact/hooks';
import type { paths } from '../../generated/internal-api';
import { api, must, type Schemas } from '../api';
import { ProblemView, Table, usePages, when, When } from '../ui';

type Entry = Schemas['AuditEntry'];
type Action = NonNullable<paths['/audit-log']['get']['parameters']['query']>['action'];

const ACTIONS = ['key.created', 'key.revoked', 'key.rolled', 'key.updated', 'key.version_changed', 'webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.secret_rotated', 'webhook.disabled', 'user.signed_in', 'user.sign_in_failed', 'workspace.plan_changed', 'workspace.key_policy_changed', 'workspace.test_data_deleted'] as const satisfies ReadonlyArray<NonNullable<Action>>;
// An action the document names and this list does not fails the build.
const everyAction: [Exclude<NonNullable<Action>, (typeof ACTIONS)[number]>] extends [never] ? true : never = true;
void everyAction;

/** The audit log, newest first, filtered by action. */
export function AuditPage() {
  const [action, setAction] = useState<Action>(undefined);
  const [hideSignIns, setHideSignIns] = useState(false);
  const { items: entries, problem, moreButton } = usePages<Entry>(
    (next) => must(api.GET('/audit-log', { params: { query: { limit: 50, ...(action ? { action } : {}), ...(hideSignIns ? { hide_sign_ins: true } : {}), ...(next ? { cursor: next } : {}) } } })),
    [action, hideSignIns],
  );
  return (
    <>
      <h1>Audit log</h1>
      <label>
        Action
        <select value={action ?? ''} onChange={(e) => setAction((e.currentTarget.value || undefined) as Action)}>
          <option value="">All actions</option>
          {ACTIONS.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
      </label>
      <label>
        <input type="checkbox" checked={hideSignIns} onChange={(e) => setHideSignIns(e.currentTarget.checked)} /> Hide sign-ins
      </label>
      <ProblemView problem={problem} />
      {entries.length === 0 && !problem && <p>Nothing recorded{action ? ` for ${action}` : ''}.</p>}
      {entries.length > 0 && (
        <Table caption="Audit log" columns={['Time', 'Who', 'Action', 'Target', 'Address', 'Details']}>
            {entries.map((e) => (
              <tr key={e.id}>
                <td><When at={e.at} /></td>
                <td>
                  {e.actor.label} <span class="muted">({e.actor.type})</span>
                </td>
                <td>{e.action}</td>
                <td>{e.target.id ?? e.target.type}</td>
                <td>{e.ip ?? '—'}</td>
                <td>
                  <Details details={e.details} />
                </td>
              </tr>
            ))}
        </Table>
      )}
      {moreButton('Show older entries')}
    </>
  );
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A value of an entry's details in words: times as every time on the page (UTC), lists joined, a change as from → to. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return RFC3339.test(value) ? when(value, true) : value;
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(shown).join(', ');
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    const keys = entries.map(([k]) => k).sort().join();
    if (keys === 'from,to') return `${shown((value as { from: unknown }).from)} → ${shown((value as { to: unknown }).to)}`;
    return entries.map(([k, v]) => `${k.replace(/_/g, ' ')} ${shown(v)}`).join('; ');
  }
  return String(value);
}

/** An audit entry's details, one per line, in words rather than JSON. */
function Details({ details }: { details: Entry['details'] }) {
  const entries = Object.entries((details ?? {}) as Record<string, unknown>);
  if (entries.length === 0) return <>—</>;
  return (
    <ul class="details">
      {entries.map(([k, v]) => (
        <li key={k}>
          <span class="muted">{k.replace(/_/g, ' ')}:</span> {shown(v)}
        </li>
      ))}
    </ul>
  );
}
