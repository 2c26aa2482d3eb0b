// The console's building blocks: every screen shows loading, errors and empty states with these.
import type { ComponentChildren, TargetedEvent } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, NetworkError } from '../api/http.ts';
import { useSessionState } from '../session.tsx';

export function PageHeader(props: {
  title: ComponentChildren;
  subtitle?: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <div class="page-header">
      <div>
        <h1>{props.title}</h1>
        {props.subtitle && <p class="muted">{props.subtitle}</p>}
      </div>
      {props.actions && <div class="actions">{props.actions}</div>}
    </div>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="loading" role="status">
      {what}…
    </p>
  );
}

export function EmptyState(props: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty" role="status">
      <h2>{props.title}</h2>
      {props.children}
    </div>
  );
}

/** A problem the console itself explains (not an answer of the server). */
export class Problem extends Error {
  constructor(
    readonly title: string,
    detail: string,
  ) {
    super(detail);
  }
}

/** What an error means for the operator, in words: the role for a 403, the network for no answer. */
export function explain(
  error: unknown,
  role: string | undefined,
): { title: string; detail: string; retry: boolean } {
  if (error instanceof Problem) return { title: error.title, detail: error.message, retry: false };
  if (error instanceof NetworkError) {
    return {
      title: 'The server cannot be reached',
      detail: 'Check the network or the server, then retry.',
      retry: true,
    };
  }
  if (error instanceof ApiError) {
    switch (error.status) {
      case 401:
        return { title: 'Signed out', detail: error.message, retry: false };
      case 403:
        return {
          title: `Your role${role ? ` (${role})` : ''} may not do this`,
          detail: `${error.message}. A workspace manager or owner can change your role.`,
          retry: false,
        };
      case 404:
        return { title: 'Not found', detail: error.message, retry: false };
      default:
        return {
          title: error.status >= 500 ? 'The server failed' : `The server refused: ${error.type}`,
          detail: `${error.message}${error.id ? ` (error ${error.id})` : ''}`,
          retry: error.status >= 500 || error.status === 429,
        };
    }
  }
  return {
    title: 'Something went wrong',
    detail: error instanceof Error ? error.message : String(error),
    retry: true,
  };
}

/** A failed load: what went wrong and, when trying again may help, a retry button. */
export function ErrorView({ error, retry }: { error: unknown; retry?: () => void }) {
  const { session } = useSessionState();
  const { title, detail, retry: retryable } = explain(error, session?.role);
  return (
    <div class="error-view" role="alert">
      <h2>{title}</h2>
      <p>{detail}</p>
      {retryable && retry && (
        <button type="button" onClick={retry}>
          Retry
        </button>
      )}
    </div>
  );
}

/** The error of an action, beside its control. */
export function InlineError({ error }: { error: unknown }) {
  const { session } = useSessionState();
  if (error === undefined) return null;
  const { title, detail } = explain(error, session?.role);
  return (
    <p class="inline-error" role="alert">
      <strong>{title}.</strong> {detail}
    </p>
  );
}

/** Loading, error or the content: the three states of every loaded view. */
export function Loaded<T>(props: {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  children: (data: T) => ComponentChildren;
}) {
  if (props.error !== undefined) return <ErrorView error={props.error} retry={props.reload} />;
  if (props.data === undefined) return <Loading />;
  return <>{props.children(props.data)}</>;
}

const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 30],
  ['month', 12],
  ['year', Infinity],
];

export function relativeTime(iso: string, now = Date.now()): string {
  let value = (Date.parse(iso) - now) / 1000;
  for (const [unit, size] of STEPS) {
    if (Math.abs(value) < size) return RELATIVE.format(Math.round(value), unit);
    value /= size;
  }
  return iso;
}

export function Time({ iso }: { iso: string | undefined }) {
  if (!iso) return <span class="muted">never</span>;
  return (
    <time dateTime={iso} title={new Date(iso).toLocaleString()}>
      {relativeTime(iso)}
    </time>
  );
}

/** A value to copy: selectable text and a copy button. */
export function CopyValue({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      // Clipboard access needs a secure context: the value stays selectable.
    }
  };
  return (
    <span class="copy-value">
      <code aria-label={label}>{value}</code>
      <button type="button" class="small secondary" onClick={() => void copy()} aria-label={`Copy ${label}`}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </span>
  );
}

/** A secret value the server shows once (a key, a token). */
export function ShownOnce(props: { label: string; value: string; onDone: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <div class="shown-once" role="status" tabIndex={-1} ref={ref}>
      <p>
        <strong>{props.label}</strong>: copy it now, it is shown only once.
      </p>
      <CopyValue value={props.value} label={props.label} />
      <button type="button" class="small secondary" onClick={props.onDone}>
        Done
      </button>
    </div>
  );
}

/** A destructive action asked twice: the first press asks, the second does it. */
export function ConfirmButton(props: {
  label: string;
  confirm: string;
  busy?: boolean;
  onConfirm: () => void;
  class?: string;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button
        type="button"
        class={`danger ${props.class ?? ''}`}
        disabled={props.busy}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    );
  }
  return (
    <span class="confirm">
      <span>{props.confirm}</span>
      <button
        type="button"
        class="danger"
        autoFocus
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        Yes, {props.label.toLowerCase()}
      </button>
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function Field(props: { label: string; hint?: ComponentChildren; children: ComponentChildren }) {
  return (
    <label class="field">
      <span class="label">{props.label}</span>
      {props.children}
      {props.hint && <span class="hint">{props.hint}</span>}
    </label>
  );
}

export type InputEvent = TargetedEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, Event>;
/** The value of an input's event. */
export const valueOf = (event: InputEvent): string => event.currentTarget.value;

export interface Column<T> {
  /** The header; with `hiddenLabel`, read by screen readers only (an actions column). */
  label: string;
  hiddenLabel?: boolean;
  /** Left out on phone-width screens. */
  wide?: boolean;
  cell: (item: T) => ComponentChildren;
}

/** A list of records as a table: a row per item, a column per fact. */
export function ListTable<T extends { id: string }>({
  columns,
  items,
}: {
  columns: Column<T>[];
  items: T[];
}) {
  return (
    <table class="list">
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.label} scope="col" class={c.wide ? 'wide' : undefined}>
              {c.hiddenLabel ? <span class="visually-hidden">{c.label}</span> : c.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr key={item.id}>
            {columns.map((c) => (
              <td key={c.label} class={c.wide ? 'wide' : undefined}>
                {c.cell(item)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A resource's tags, as chips after its name. */
export function Tags({ tags }: { tags: Record<string, string> }) {
  return (
    <>
      {Object.entries(tags).map(([k, v]) => (
        <span key={k} class="tag">
          {k}: {v}
        </span>
      ))}
    </>
  );
}
