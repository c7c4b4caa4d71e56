import { useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api';
import { inMode } from '../mode';
import { ProblemView, Table, usePages, When } from '../ui';

type LoggedEvent = Schemas['LoggedEvent'];

/** The event log of the mode shown, newest first: each event's time, type and object, its payload on demand. */
export function EventLog() {
  const [round, setRound] = useState(0);
  const { items, problem, moreButton } = usePages<LoggedEvent>((next) => must(api.GET('/event-log', { params: { query: { ...inMode(), limit: 50, ...(next ? { cursor: next } : {}) } } })), [round]);
  return (
    <section aria-labelledby="event-log">
      <h2 id="event-log">Event log</h2>
      <p>Every event of this mode, newest first, as it was delivered.</p>
      <button type="button" onClick={() => setRound((r) => r + 1)}>
        Refresh
      </button>
      <ProblemView problem={problem} />
      {items.length === 0 && !problem ? (
        <p>No events yet.</p>
      ) : (
        <Table caption="Event log" columns={['Time', 'Type', 'Object', 'Payload']}>
          {items.map((e) => (
            <tr key={e.id}>
              <td>
                <When at={e.created_at} seconds />
              </td>
              <td>
                <code>{e.type}</code>
              </td>
              <td>
                <code class="whole">{String((e.data.object as { id?: unknown }).id ?? '')}</code>
              </td>
              <td>
                <details>
                  <summary>Payload of {e.id}</summary>
                  <pre>{JSON.stringify(e, null, 2)}</pre>
                </details>
              </td>
            </tr>
          ))}
        </Table>
      )}
      {moreButton('Show more events')}
    </section>
  );
}
