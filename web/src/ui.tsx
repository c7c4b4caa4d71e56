import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { Problem } from './api';

/** No-break space: a time never wraps inside itself, however narrow its column. */
const NBSP = '\u00a0';

/**
 * `2026-11-23 09:30 UTC` (with `:05` seconds when asked); an em dash for "never". Every time on
 * the page is UTC, as the API, the logs and the "Recover since" field are, and says so.
 */
export function when(iso: string | null | undefined, seconds = false): string {
  if (!iso) return '—';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}${NBSP}${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}${seconds ? `:${pad(d.getUTCSeconds())}` : ''}${NBSP}UTC`;
}

/** A time as `when()` writes it, that never wraps inside itself (a table cell breaks after a hyphen otherwise). */
export function When({ at, seconds = false }: { at: string | null | undefined; seconds?: boolean }) {
  return at ? (
    <time class="when" dateTime={at}>
      {when(at, seconds)}
    </time>
  ) : (
    <>—</>
  );
}

/**
 * Where a problem is, in the words of the form: `/allowed_ips/1` is "Allowed IP addresses, entry 2"
 * when `labels` names `allowed_ips` so; a field it does not name is given by its name.
 */
export function placeOf(where: string, labels: Record<string, string> = {}): string {
  const [field = '', ...rest] = where.replace(/^\//, '').split('/');
  const entry = rest.length > 0 && /^\d+$/.test(rest[0]!) ? `, entry ${Number(rest[0]) + 1}` : '';
  return `${labels[field] ?? field.replace(/_/g, ' ')}${entry}`;
}

/**
 * What failed, why, and what to do: a Problem's message, its field errors (each once, where it is
 * in the form's words), and its request id. With field errors, the message says only that the
 * form needs them: the server's detail repeats the first one.
 */
export function ProblemView({ problem, labels }: { problem: unknown; labels?: Record<string, string> }) {
  if (problem == null) return null;
  const p = problem instanceof Problem ? problem : new Problem(0, 'unexpected', String(problem));
  return (
    <div class="problem" role="alert">
      <p>{p.details.length > 0 ? (p.details.length === 1 ? 'Nothing was saved: correct this and try again.' : 'Nothing was saved: correct these and try again.') : p.message}</p>
      {p.details.length > 0 && (
        <ul>
          {p.details.map((d) => (
            <li key={`${d.where ?? ''} ${d.message}`}>{d.where ? `${placeOf(d.where, labels)}: ${d.message}` : d.message}</li>
          ))}
        </ul>
      )}
      {p.requestId && <p class="muted">Request id: {p.requestId} (quote it when you ask for help).</p>}
    </div>
  );
}

/** The outcome of an action, read out by screen readers. */
export function Notice({ text }: { text: string | null }) {
  return (
    <p class="notice" role="status">
      {text ?? ''}
    </p>
  );
}

/** Loads `load()` when `deps` change; `reload` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; problem: unknown; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [problem, setProblem] = useState<unknown>(null);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (value) => {
        if (!live) return;
        setData(value);
        setProblem(null);
      },
      (error: unknown) => live && setProblem(error),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  return { data, problem, reload: () => setRound((r) => r + 1) };
}

/** A secret shown this once: a labelled read-only field, a copy button and a plain warning. */
export function ShownOnce({ label, value, warning }: { label: string; value: string; warning: string }) {
  const [copied, setCopied] = useState<string | null>(null);
  const field = useRef<HTMLTextAreaElement>(null);
  // Focus lands on the value as it appears: the next thing the person does is copy it.
  useEffect(() => field.current?.focus(), [value]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied to the clipboard.');
    } catch {
      field.current?.select();
      setCopied('The browser did not allow copying: the text is selected, press Ctrl+C (or ⌘C).');
    }
  };
  return (
    <div class="secret">
      <p class="warning">
        <strong>{warning}</strong>
      </p>
      <label>
        {label}
        {/* A text area, not a one-line field: the whole value shows, wrapped, with nothing scrolled out of sight. */}
        <textarea ref={field} class="shown-once" readOnly rows={2} value={value} spellcheck={false} autocomplete="off" onFocus={(e) => e.currentTarget.select()} />
      </label>
      <button type="button" onClick={() => void copy()}>
        Copy {label.toLowerCase()}
      </button>
      <Notice text={copied} />
    </div>
  );
}

/**
 * A confirmation in a modal dialog (focus stays inside it, Escape cancels): `onConfirm` runs only
 * when the person presses the confirming button.
 */
export function Confirm(props: { open: boolean; title: string; children: ComponentChildren; confirm: string; onConfirm: () => void; onCancel: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  // An id of its own: a page with several confirmations (roll, revoke, upgrade) names each by its own title.
  const titleId = useId();
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (props.open && !d.open) {
      d.showModal();
      // The safe choice first: Enter or Space at once cancels, never destroys.
      cancel.current?.focus();
    }
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={dialog} aria-labelledby={titleId} onCancel={props.onCancel}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
      <div class="actions">
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirm}
        </button>
        <button type="button" ref={cancel} onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

/** A table of `columns` whose rows are `children`, scrolling sideways on a narrow screen instead of squeezing its columns. */
export function Table({ caption, columns, children }: { caption: string; columns: string[]; children: ComponentChildren }) {
  const wrap = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  // Whether the table is wider than its place: then a hint says so, and a shadow marks the cut edge.
  useEffect(() => {
    const el = wrap.current;
    if (!el) return;
    const check = () => setScrolls(el.scrollWidth > el.clientWidth + 1);
    check();
    const observer = new ResizeObserver(check);
    observer.observe(el);
    return () => observer.disconnect();
  });
  return (
    <>
    {scrolls && (
      <p class="scroll-hint muted" aria-hidden="true">
        Scroll sideways for more columns →
      </p>
    )}
    <div ref={wrap} class={scrolls ? 'table-wrap scrolls' : 'table-wrap'} tabIndex={0} role="region" aria-label={scrolls ? `${caption} (scrolls sideways)` : caption}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
    </>
  );
}

/** Runs an action, remembering whether it is under way and how it ended. */
export function useAction(): { busy: boolean; problem: unknown; notice: string | null; run: (action: () => Promise<string | null>) => Promise<void>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  return {
    busy,
    problem,
    notice,
    clear: () => {
      setProblem(null);
      setNotice(null);
    },
    run: async (action) => {
      setBusy(true);
      setProblem(null);
      setNotice(null);
      try {
        setNotice(await action());
      } catch (error) {
        setProblem(error);
      } finally {
        setBusy(false);
      }
    },
  };
}

/** For a viewer: why there is nothing to press. */
export function ViewerNote() {
  return <p class="muted">You have viewer access: you can see everything here, and an admin of the workspace can make changes.</p>;
}

/**
 * A cursor list: its first page loaded when `deps` change, and `moreButton(label)`, which
 * appends the next page while there is one (with what went wrong, if it did).
 */
export function usePages<T>(page: (cursor?: string) => Promise<{ data: T[]; next_cursor: string | null }>, deps: unknown[]) {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const { problem } = useLoad(async () => {
    const first = await page();
    setItems(first.data);
    setCursor(first.next_cursor);
    return first;
  }, deps);
  const more = useAction();
  const moreButton = (label: string) => (
    <>
      {cursor && (
        <button
          type="button"
          disabled={more.busy}
          onClick={() =>
            void more.run(async () => {
              const next = await page(cursor);
              setItems((all) => [...all, ...next.data]);
              setCursor(next.next_cursor);
              return null;
            })
          }
        >
          {label}
        </button>
      )}
      <ProblemView problem={more.problem} />
    </>
  );
  return { items, problem, moreButton };
}
