import { api, must } from '../api';
import { ProblemView, useLoad } from '../ui';
import { EventLog } from './event-log';

/** The event catalog, each event with its description and the example payload of the public document. */
export function EventsPage() {
  const { data, problem } = useLoad(() => must(api.GET('/events')), []);
  return (
    <>
      <h1>Events</h1>
      <EventLog />
      <h2>Event types</h2>
      <p>
        What a webhook can subscribe to: an exact name, <code>&lt;resource&gt;.*</code> or <code>*</code>. Each delivery's body is the event below, signed with the
        subscription's secret.
      </p>
      <ProblemView problem={problem} />
      {data?.data.map((e) => (
        <section key={e.name} class="event" aria-labelledby={`event-${e.name}`}>
          <h3 id={`event-${e.name}`}>
            <code>{e.name}</code>
          </h3>
          <p>{e.description}</p>
          <details>
            <summary>Example payload of {e.name}</summary>
            <pre>{JSON.stringify(e.example, null, 2)}</pre>
          </details>
        </section>
      ))}
    </>
  );
}
