import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Problem } from './api';

/** `2026-11-23 09:30` (with `:05` seconds when asked) in the reader's time zone; an em dash for "never". */
export function when(iso: string | null | undefined, seconds = false): string {
  if (!iso) return '—';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}${seconds ? `:${pad(d.getSeconds())}` : ''}`;
}

/** What failed, why, and what to do: a Problem's message, its field errors, and its request id. */
export function ProblemView({ problem }: { problem: unknown }) {
  if (problem == null) return null;
  const p = problem instanceof Problem ? problem : new Problem(0, 'unexpected', String(problem));
  return (
    <div class="problem" role="alert">
      <p>{p.message}</p>
      {p.details.length > 0 && (
        <ul>
          {p.details.map((d) => (
            <li key={d}>{d}</li>
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
  const field = useRef<HTMLInputElement>(null);
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
        <input ref={field} type="text" readOnly value={value} spellcheck={false} onFocus={(e) => e.currentTarget.select()} />
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
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" onCancel={props.onCancel}>
      <h2 id="confirm-title">{props.title}</h2>
      {props.children}
      <div class="actions">
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirm}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

/** A table of `columns` whose rows are `children`, scrolling sideways on a narrow screen instead of squeezing its columns. */
export function Table({ caption, columns, children }: { caption: string; columns: string[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={caption}>
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
