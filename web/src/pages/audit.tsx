import { useState } from 'preact/hooks';
import type { paths } from '../../generated/internal-api';
import { api, must, type Schemas } from '../api';
import { ProblemView, Table, usePages, When } from '../ui';

type Entry = Schemas['AuditEntry'];
type Action = NonNullable<paths['/audit-log']['get']['parameters']['query']>['action'];

const ACTIONS = ['key.created', 'key.revoked', 'key.rolled', 'key.updated', 'webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.secret_rotated', 'webhook.disabled', 'user.signed_in', 'user.sign_in_failed', 'workspace.plan_changed', 'workspace.key_policy_changed'] as const satisfies ReadonlyArray<NonNullable<Action>>;
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
                  <code>{JSON.stringify(e.details)}</code>
                </td>
              </tr>
            ))}
        </Table>
      )}
      {moreButton('Show older entries')}
    </>
  );
}
