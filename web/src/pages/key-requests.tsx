import { useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api';
import { inMode, link } from '../mode';
import { ProblemView, Table, useLoad, usePages, When } from '../ui';

type Entry = Schemas['KeyRequest'];
type Window = Schemas['KeyRequestSummary']['last_24_hours'];

/** The status filters the page offers: all, or one class. */
const CLASSES = [
  { value: '', label: 'All requests' },
  { value: '2xx', label: 'Successes (2xx)' },
  { value: '4xx', label: 'Client errors (4xx)' },
  { value: '5xx', label: 'Server errors (5xx)' },
];

/** The errors of both windows side by side: one row per status and code. */
function ErrorSummary({ day, week }: { day: Window; week: Window }) {
  const rows = week.by.map((w) => ({ ...w, day: day.by.find((d) => d.status === w.status && d.error_code === w.error_code)?.count ?? 0 }));
  return (
    <>
      <p>
        {day.errors} {day.errors === 1 ? 'error' : 'errors'} in the last 24 hours, {week.errors} in the last 7 days (whole UTC hours since <When at={week.since} />
        ).
      </p>
      {rows.length > 0 && (
        <Table caption="Errors by status and code" columns={['Status', 'Error code', 'Last 24 hours', 'Last 7 days']}>
          {rows.map((r) => (
            <tr key={`${r.status} ${r.error_code ?? ''}`}>
              <td>{r.status}</td>
              <td>{r.error_code ? <code class="whole">{r.error_code}</code> : '—'}</td>
              <td>{r.day}</td>
              <td>{r.count}</td>
            </tr>
          ))}
        </Table>
      )}
    </>
  );
}

/** A key's requests: its errors over 24 hours and 7 days, and its request log, newest first, filtered by class of status. */
export function KeyRequestsPage({ id }: { id: string }) {
  const [status, setStatus] = useState('');
  const [round, setRound] = useState(0);
  const summary = useLoad(() => must(api.GET('/keys/{id}/requests/summary', { params: { path: { id }, query: inMode() } })), [id, round]);
  const log = usePages<Entry>((next) => must(api.GET('/keys/{id}/requests', { params: { path: { id }, query: { ...inMode(), limit: 50, ...(status ? { status } : {}), ...(next ? { cursor: next } : {}) } } })), [id, status, round]);
  const entries = log.items;
  return (
    <>
      <p>
        <a href={link(`keys/${id}`)}>← The key</a>
      </p>
      <h1>Requests</h1>
      <p class="muted">Every request made with this key, kept as long as events are. A request shows here about a second after its answer.</p>
      <button type="button" onClick={() => setRound((r) => r + 1)}>
        Refresh
      </button>
      <h2>Errors</h2>
      <ProblemView problem={summary.problem} />
      {summary.data && <ErrorSummary day={summary.data.last_24_hours} week={summary.data.last_7_days} />}
      <h2>Request log</h2>
      <label>
        Show
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          {CLASSES.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      <ProblemView problem={log.problem} />
      {entries.length === 0 && !log.problem && <p>No requests{status ? ` answered ${status}` : ''} yet.</p>}
      {entries.length > 0 && (
        <Table caption="Request log" columns={['Time', 'Method', 'Route', 'Path', 'Status', 'Error code', 'Duration', 'Request id', 'Address']}>
          {entries.map((e) => (
            <tr key={`${e.at} ${e.request_id}`} class={e.status >= 400 ? 'failed' : undefined}>
              <td>
                <When at={e.at} seconds />
              </td>
              <td>{e.method}</td>
              <td>
                <code class="whole">{e.route}</code>
              </td>
              <td class="path">
                <code>{e.path}</code>
              </td>
              <td class="status">{e.status}</td>
              <td>{e.error_code ? <code class="whole">{e.error_code}</code> : '—'}</td>
              <td class="when">{e.duration_ms.toFixed(1)} ms</td>
              <td>
                <code class="whole">{e.request_id}</code>
              </td>
              <td>{e.ip}</td>
            </tr>
          ))}
        </Table>
      )}
      {log.moreButton('Show older requests')}
    </>
  );
}
