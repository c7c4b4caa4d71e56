import { useEffect, useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api';
import { inMode, link } from '../mode';
import { Confirm, Notice, ProblemView, ShownOnce, Table, useAction, useLoad, ViewerNote, When } from '../ui';

type Webhook = Schemas['Webhook'];
type Delivery = Schemas['Delivery'];
type EventType = Schemas['EventTypeList']['data'][number];

const STATUSES = ['pending', 'held', 'succeeded', 'failed'] as const;

/** How long a list keeps looking for news after an action: a queued event may take a moment to appear. */
const WATCH_MS = 30_000;

/** Loads again every `ms` while `active` says there is something still moving. */
function usePolling(reload: () => void, active: boolean, ms = 1500) {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(reload, ms);
    return () => clearInterval(timer);
  }, [active]);
}

/** True until WATCH_MS after `deps` last changed. */
function useWatching(deps: unknown[]): boolean {
  const [until, setUntil] = useState(0);
  useEffect(() => setUntil(Date.now() + WATCH_MS), deps);
  return Date.now() < until;
}

/** The state of a subscription's last deliveries, in words. */
function LastDeliveries({ deliveries, problem }: { deliveries: Delivery[] | undefined; problem: unknown }) {
  if (problem) return <span class="muted">unknown</span>;
  if (!deliveries) return <span class="muted">…</span>;
  if (deliveries.length === 0) return <span class="muted">none yet</span>;
  return (
    <ul class="badges">
      {deliveries.map((d) => (
        <li key={d.id} class={`badge ${d.status}`}>
          {d.event_type}: {d.status}
        </li>
      ))}
    </ul>
  );
}

export function WebhooksPage({ admin }: { admin: boolean }) {
  const { data, problem } = useLoad(() => must(api.GET('/webhooks', { params: { query: { ...inMode(), limit: 100 } } })), []);
  // Every row's latest deliveries in one request, not one per row.
  const ids = data?.data.map((w) => w.id).join(',') ?? '';
  const recent = useLoad(async () => (ids === '' ? new Map<string, Delivery[]>() : new Map((await must(api.GET('/webhook-deliveries/recent', { params: { query: { ...inMode(), webhook_ids: ids } } }))).data.map((r) => [r.webhook_id, r.deliveries]))), [ids]);
  return (
    <>
      <h1>Webhooks</h1>
      {admin ? (
        <p>
          <a class="button" href={link('webhooks/new')}>
            Create webhook
          </a>
        </p>
      ) : (
        <ViewerNote />
      )}
      <ProblemView problem={problem} />
      {data && data.data.length === 0 && <p>No webhooks yet.</p>}
      {data && data.data.length > 0 && (
        <Table caption="Webhooks" columns={['URL', 'Events', 'Enabled', 'Last deliveries']}>
            {data.data.map((w) => (
              <tr key={w.id}>
                <td>
                  <a href={link(`webhooks/${w.id}`)}>{w.url}</a>
                  {w.description && <div class="muted">{w.description}</div>}
                </td>
                <td>{w.events.join(', ')}</td>
                <td>{w.enabled ? 'Yes' : `No${w.disabled_reason ? ` (${w.disabled_reason})` : ''}`}</td>
                <td>
                  <LastDeliveries deliveries={recent.data?.get(w.id)} problem={recent.problem} />
                </td>
              </tr>
            ))}
        </Table>
      )}
    </>
  );
}

/** Patterns from the catalog: `*`, `<resource>.*` and each exact name. */
function EventPicker({ events, chosen, onChange }: { events: EventType[]; chosen: Set<string>; onChange: (next: Set<string>) => void }) {
  const resources = [...new Set(events.filter((e) => e.name !== 'webhook.test').map((e) => e.name.split('.')[0] ?? ''))];
  const toggle = (name: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(name);
    else next.delete(name);
    onChange(next);
  };
  const box = (name: string, label: string) => (
    <label key={name}>
      <input type="checkbox" name="events" value={name} checked={chosen.has(name)} onChange={(e) => toggle(name, e.currentTarget.checked)} />
      {label}
    </label>
  );
  return (
    <fieldset>
      <legend>Events</legend>
      {box('*', 'Every event (*)')}
      <div class="scope-groups">
        {resources.map((r) => (
          <fieldset key={r} class="scope-group">
            <legend>{r}</legend>
            {box(`${r}.*`, `Every ${r} event (${r}.*)`)}
            {events.filter((e) => e.name.startsWith(`${r}.`)).map((e) => box(e.name, e.name))}
          </fieldset>
        ))}
      </div>
    </fieldset>
  );
}

/** What the service said about the subscription (webhook.disabled, webhook.failing), as a banner atop its page. */
function OperationalBanner({ hook }: { hook: Webhook }) {
  if (hook.disabled_reason) {
    return (
      <p class="warning banner" role="status">
        <strong>Turned off by the service</strong>: {hook.disabled_reason === 'gone' ? 'the receiver answered 410 Gone' : 'every attempt failed for five days'}. Fix the receiver, then enable it again (Edit).
      </p>
    );
  }
  if (hook.failing_since && hook.failing_reported_at) {
    return (
      <p class="warning banner" role="status">
        <strong>Failing</strong>: at least half of its last 20 deliveries failed (reported <When at={hook.failing_reported_at} />; failing since <When at={hook.failing_since} />). After five days of failures the service turns it off.
      </p>
    );
  }
  return null;
}

type WebhookBody = { url: string; events: string[]; description: string | null; max_deliveries_per_second: number | null; payload: Webhook['payload']; ordering: Webhook['ordering']; signature?: Webhook['signature'] };

function WebhookForm({ initial, submitLabel, onSubmit, busy }: { initial?: Webhook; submitLabel: string; onSubmit: (body: WebhookBody) => void; busy: boolean }) {
  const catalog = useLoad(() => must(api.GET('/events')), []);
  const [url, setUrl] = useState(initial?.url ?? '');
  const [description, setDescription] = useState(initial?.description ?? '');
  const [events, setEvents] = useState<Set<string>>(new Set(initial?.events ?? []));
  const [perSecond, setPerSecond] = useState(initial?.max_deliveries_per_second == null ? '' : String(initial.max_deliveries_per_second));
  const [payload, setPayload] = useState<Webhook['payload']>(initial?.payload ?? 'full');
  const [signature, setSignature] = useState<Webhook['signature']>('hmac');
  const [ordering, setOrdering] = useState<Webhook['ordering']>(initial?.ordering ?? 'none');
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit({ url: url.trim(), events: [...events], description: description.trim() || null, max_deliveries_per_second: perSecond.trim() === '' ? null : Number(perSecond), payload, ordering, ...(initial ? {} : { signature }) });
      }}
    >
      <label>
        URL
        <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://example.com/hooks/workspace" />
      </label>
      <label>
        Description (optional)
        <input type="text" maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Max deliveries per second (optional, 1-1000; empty: no limit)
        <input type="number" min={1} max={1000} step={1} value={perSecond} onInput={(e) => setPerSecond(e.currentTarget.value)} />
      </label>
      <label>
        Payload
        <select value={payload} onChange={(e) => setPayload(e.currentTarget.value as Webhook['payload'])}>
          <option value="full">Full: the object whole, and the old values of what changed</option>
          <option value="thin">Thin: the object's id and version only (the receiver fetches it)</option>
        </select>
      </label>
      <label>
        Order
        <select value={ordering} onChange={(e) => setOrdering(e.currentTarget.value as Webhook['ordering'])}>
          <option value="none">None: each delivery goes as soon as it can</option>
          <option value="per_object">Per object: one object's events in the order of its versions, each waiting for the one before</option>
        </select>
      </label>
      {!initial && (
        <label>
          Signature
          <select value={signature} onChange={(e) => setSignature(e.currentTarget.value as Webhook['signature'])}>
            <option value="hmac">HMAC-SHA256 with a shared secret (v1)</option>
            <option value="ed25519">Ed25519, verified with a public key (v1a)</option>
          </select>
        </label>
      )}
      <ProblemView problem={catalog.problem} />
      {catalog.data && <EventPicker events={catalog.data.data} chosen={events} onChange={setEvents} />}
      <button type="submit" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}

export function NewWebhookPage({ admin }: { admin: boolean }) {
  const [created, setCreated] = useState<Schemas['WebhookWithSecret'] | null>(null);
  const action = useAction();
  if (!admin) {
    return (
      <>
        <h1>Create webhook</h1>
        <ViewerNote />
      </>
    );
  }
  if (created) {
    return (
      <>
        <h1>Webhook created</h1>
        {created.secret ? (
          <>
            <p>
              Deliveries to <code>{created.url}</code> are signed with this secret (Standard Webhooks: <code>webhook-signature</code>).
            </p>
            <ShownOnce label="Secret" value={created.secret} warning="Copy this secret now: it will not be shown again. Your receiver needs it to verify each delivery." />
          </>
        ) : (
          <p>
            Deliveries to <code>{created.url}</code> are signed with Ed25519 (Standard Webhooks <code>v1a</code>). Your receiver verifies them with this public key, which the webhook's page always shows: <code>{created.public_key}</code>
          </p>
        )}
        <p>
          <a href={link(`webhooks/${created.id}`)}>Go to the webhook</a>
        </p>
      </>
    );
  }
  return (
    <>
      <p>
        <a href={link('webhooks')}>← Webhooks</a>
      </p>
      <h1>Create webhook</h1>
      <WebhookForm
        submitLabel="Create webhook"
        busy={action.busy}
        onSubmit={(body) =>
          void action.run(async () => {
            setCreated(await must(api.POST('/webhooks', { params: { query: inMode() }, body })));
            return null;
          })
        }
      />
      <ProblemView problem={action.problem} />
    </>
  );
}

/** What a held delivery waits behind: the delivery about its object being attempted now. */
function HeldBehind({ webhookId, delivery }: { webhookId: string; delivery: string }) {
  return (
    <>
      {' '}
      behind <a href={link(`webhooks/${webhookId}/deliveries/${delivery}`)}>{delivery}</a>
    </>
  );
}

function Deliveries({ id, round }: { id: string; round: number }) {
  const [status, setStatus] = useState<'' | (typeof STATUSES)[number]>('');
  const { data, problem, reload } = useLoad(() => must(api.GET('/webhooks/{id}/deliveries', { params: { path: { id }, query: { ...inMode(), limit: 50, ...(status ? { status } : {}) } } })), [id, status, round]);
  const watching = useWatching([id, status, round]);
  usePolling(reload, watching || (data?.data.some((d) => d.status === 'pending' || d.status === 'held') ?? false));
  return (
    <section>
      <h2>Deliveries</h2>
      <div class="toolbar">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as typeof status)}>
            <option value="">All</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={reload}>
          Refresh deliveries
        </button>
      </div>
      <ProblemView problem={problem} />
      {data && data.data.length === 0 && <p>No deliveries{status ? ` with status ${status}` : ''}.</p>}
      {data && data.data.length > 0 && (
        <Table caption="Deliveries" columns={['Created', 'Event', 'Status', 'Attempts', 'Last answer', 'Details']}>
            {data.data.map((d: Delivery) => (
              <tr key={d.id}>
                <td><When at={d.created_at} /></td>
                <td>{d.event_type}</td>
                <td>
                  <span class={`badge ${d.status}`}>{d.status}</span>
                  {d.held_behind && <HeldBehind webhookId={id} delivery={d.held_behind} />}
                </td>
                <td>{d.attempts}</td>
                <td>{d.last_response_status ?? d.last_error ?? '—'}</td>
                <td>
                  <a href={link(`webhooks/${id}/deliveries/${d.id}`)} aria-label={`Delivery ${d.id} details`}>
                    {d.id}
                  </a>
                </td>
              </tr>
            ))}
        </Table>
      )}
    </section>
  );
}

/** `2026-11-23T09:30` in UTC, as a datetime-local field takes it (the field itself has no zone: its label says UTC). */
function utcInput(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16);
}

/** Recovery (docs/reference.md section 11): what failed or was missed while disabled, since a moment, sent again. */
function Recover({ id, enabled, busy, run, onDone }: { id: string; enabled: boolean; busy: boolean; run: (action: () => Promise<string | null>) => Promise<void>; onDone: () => void }) {
  const [since, setSince] = useState(() => utcInput(Date.now() - 24 * 3_600_000));
  return (
    <form
      class="toolbar"
      onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          const result = await must(api.POST('/webhooks/{id}/recover', { params: { path: { id }, query: inMode() }, body: { since: new Date(`${since.length === 16 ? `${since}:00` : since}Z`).toISOString() } }));
          onDone();
          return result.deliveries === 0 ? 'Nothing to recover since then: every delivery of that time succeeded or is under way.' : `${result.deliveries} ${result.deliveries === 1 ? 'delivery' : 'deliveries'} queued: failed ones again, and the events missed while it was disabled.`;
        });
      }}
    >
      <label>
        Recover since (UTC)
        <input type="datetime-local" required value={since} onInput={(e) => setSince(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy || !enabled} aria-describedby={enabled ? undefined : 'recover-disabled'}>
        Recover missed events
      </button>
      {!enabled && (
        <span id="recover-disabled" class="muted">
          Enable the webhook first: recovery sends to it.
        </span>
      )}
    </form>
  );
}

export function WebhookPage({ id, admin }: { id: string; admin: boolean }) {
  const [round, setRound] = useState(0);
  const { data: hook, problem } = useLoad(() => must(api.GET('/webhooks/{id}', { params: { path: { id }, query: inMode() } })), [id, round]);
  const [editing, setEditing] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const action = useAction();
  const changed = () => setRound((r) => r + 1);
  const patch = (body: Schemas['WebhookUpdate'], message: string) =>
    action.run(async () => {
      await must(api.PATCH('/webhooks/{id}', { params: { path: { id }, query: inMode() }, body }));
      setEditing(false);
      changed();
      return message;
    });
  return (
    <>
      <p>
        <a href={link('webhooks')}>← Webhooks</a>
      </p>
      <h1>Webhook {hook ? hook.url : id}</h1>
      <ProblemView problem={problem} />
      <Notice text={action.notice} />
      <ProblemView problem={action.problem} />
      {secret && <ShownOnce label="Secret" value={secret} warning="Copy the new secret now: it will not be shown again. For 24 hours deliveries are signed with both the old and the new secret, so your receiver can switch without losing any." />}
      {hook && <OperationalBanner hook={hook} />}
      {hook && (
        <>
          <dl class="facts">
            <dt>Events</dt>
            <dd>{hook.events.join(', ')}</dd>
            <dt>Description</dt>
            <dd>{hook.description ?? '—'}</dd>
            <dt>Enabled</dt>
            <dd>{hook.enabled ? 'Yes' : `No${hook.disabled_reason ? ` (disabled: ${hook.disabled_reason})` : ''}`}</dd>
            <dt>Throughput</dt>
            <dd>{hook.max_deliveries_per_second === null ? 'No limit' : `At most ${hook.max_deliveries_per_second} deliveries a second`}</dd>
            <dt>Signature</dt>
            <dd>{hook.signature === 'ed25519' ? <>Ed25519 (v1a); public key <code>{hook.public_key}</code></> : 'HMAC-SHA256 with the secret (v1)'}</dd>
            <dt>Payload</dt>
            <dd>{hook.payload === 'thin' ? 'Thin: the object\'s id and version' : 'Full: the object whole'}</dd>
            <dt>Order</dt>
            <dd>{hook.ordering === 'per_object' ? "Per object: one object's events in the order of its versions" : 'None'}</dd>
            <dt>Created</dt>
            <dd><When at={hook.created_at} /></dd>
          </dl>
          {admin ? (
            <div class="actions">
              <button type="button" onClick={() => setEditing(!editing)} aria-expanded={editing}>
                Edit
              </button>
              <button type="button" disabled={action.busy} onClick={() => void patch({ enabled: !hook.enabled }, hook.enabled ? 'Disabled: no event is delivered to it until it is enabled again.' : 'Enabled: new events are delivered to it.')}>
                {hook.enabled ? 'Disable' : 'Enable'}
              </button>
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    const rotated = await must(api.POST('/webhooks/{id}/rotate-secret', { params: { path: { id }, query: inMode() } }));
                    setSecret(rotated.secret);
                    return rotated.secret ? 'The secret is rotated.' : `The signing key is rotated: verify with the new public key ${rotated.public_key ?? ''}. For 24 hours deliveries carry a signature by the old key too.`;
                  })
                }
              >
                Rotate secret
              </button>
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    const delivery = await must(api.POST('/webhooks/{id}/test', { params: { path: { id }, query: inMode() } }));
                    changed();
                    return `A test event is queued (delivery ${delivery.id}); its outcome appears under Deliveries.`;
                  })
                }
              >
                Send test event
              </button>
              <button type="button" class="danger" onClick={() => setConfirmDelete(true)}>
                Delete
              </button>
            </div>
          ) : (
            <ViewerNote />
          )}
          {admin && editing && <WebhookForm initial={hook} submitLabel="Save changes" busy={action.busy} onSubmit={(body) => void patch(body, 'Saved.')} />}
          {admin && <Recover id={id} enabled={hook.enabled} busy={action.busy} run={action.run} onDone={changed} />}
          <Confirm
            open={confirmDelete}
            title="Delete this webhook?"
            confirm="Delete webhook"
            onCancel={() => setConfirmDelete(false)}
            onConfirm={() =>
              void action.run(async () => {
                await must(api.DELETE('/webhooks/{id}', { params: { path: { id }, query: inMode() } }));
                setConfirmDelete(false);
                location.hash = link('webhooks');
                return null;
              })
            }
          >
            <p>No more events are delivered to {hook.url}, and its pending deliveries are dropped.</p>
          </Confirm>
          <Deliveries id={id} round={round} />
        </>
      )}
    </>
  );
}

export function DeliveryPage({ webhookId, deliveryId, admin }: { webhookId: string; deliveryId: string; admin: boolean }) {
  const { data: d, problem, reload } = useLoad(() => must(api.GET('/webhooks/{id}/deliveries/{delivery_id}', { params: { path: { id: webhookId, delivery_id: deliveryId }, query: inMode() } })), [webhookId, deliveryId]);
  const action = useAction();
  const watching = useWatching([action.notice]);
  usePolling(reload, watching || d?.status === 'pending' || d?.status === 'held');
  return (
    <>
      <p>
        <a href={link(`webhooks/${webhookId}`)}>← The webhook</a>
      </p>
      <h1>Delivery {deliveryId}</h1>
      <ProblemView problem={problem} />
      {d && (
        <>
          <dl class="facts">
            <dt>Event</dt>
            <dd>
              {d.event_type} ({d.event_id})
            </dd>
            <dt>Status</dt>
            <dd>
              <span class={`badge ${d.status}`}>{d.status}</span>
              {d.held_behind && <HeldBehind webhookId={webhookId} delivery={d.held_behind} />}
            </dd>
            <dt>Created</dt>
            <dd><When at={d.created_at} /></dd>
            <dt>Delivered</dt>
            <dd><When at={d.delivered_at} /></dd>
            <dt>Next attempt</dt>
            <dd><When at={d.next_attempt_at} /></dd>
          </dl>
          {admin && (
            <div class="actions">
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    await must(api.POST('/webhooks/{id}/deliveries/{delivery_id}/retry', { params: { path: { id: webhookId, delivery_id: deliveryId }, query: inMode() } }));
                    reload();
                    return 'Retry queued: a new attempt is made now.';
                  })
                }
              >
                Retry
              </button>
            </div>
          )}
          <Notice text={action.notice} />
          <ProblemView problem={action.problem} />
          <h2>Attempts</h2>
          {d.attempts.length === 0 ? (
            <p>No attempt yet.</p>
          ) : (
            <Table caption="Attempts" columns={['#', 'Time', 'Status', 'Duration', 'Error', 'Response']}>
                {d.attempts.map((a) => (
                  <tr key={a.attempt}>
                    <td>{a.attempt}</td>
                    <td><When at={a.attempted_at} seconds /></td>
                    <td>{a.response_status ?? '—'}</td>
                    <td>{a.duration_ms} ms</td>
                    <td>{a.error ?? '—'}</td>
                    <td>{a.response_excerpt ? <pre>{a.response_excerpt}</pre> : '—'}</td>
                  </tr>
                ))}
        </Table>
          )}
        </>
      )}
    </>
  );
}
