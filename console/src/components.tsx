import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { displayDate } from './format.ts';
import type { Async } from './use-async.ts';

/** The loading state of a page or a panel: announced to screen readers, never a blank screen. */
export function Loading({ label }: { label: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> {label} …
    </p>
  );
}

/** The error state: the catalogue code, the message, the details and the request id, and a retry. */
export function ErrorNotice({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const apiError = error instanceof ApiError ? error : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div class="notice error" role="alert">
      <p>
        <strong>{apiError?.code === undefined ? 'Something went wrong' : `Error ${apiError.code}`}</strong>
        {': '}
        {message}
      </p>
      {apiError !== undefined && apiError.details.length > 0 ? (
        <ul>
          {apiError.details.map((detail) => (
            <li key={`${detail.field}:${detail.message}`}>
              {detail.field === undefined ? '' : <code>{detail.field}</code>} {detail.message}
            </li>
          ))}
        </ul>
      ) : null}
      {apiError?.requestId === undefined ? null : <p class="muted">Request id {apiError.requestId}</p>}
      {onRetry === undefined ? null : (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** The empty state: what is missing and how to get some. */
export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p>
        <strong>{title}</strong>
      </p>
      {children}
    </div>
  );
}

/** Renders an async value's three states; `children` draws the loaded value. */
export function AsyncView<T>({
  value,
  loading,
  onRetry,
  children,
}: {
  value: Async<T>;
  loading: string;
  onRetry: () => void;
  children: (value: T) => ComponentChildren;
}) {
  if (value.state === 'loading') return <Loading label={loading} />;
  if (value.state === 'error') return <ErrorNotice error={value.error} onRetry={onRetry} />;
  return <>{children(value.value)}</>;
}

/** Copies a value to the clipboard and says so. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () => {
    navigator.clipboard.writeText(text).then(
      () => setState('copied'),
      () => setState('failed'),
    );
    setTimeout(() => setState('idle'), 2500);
  };
  return (
    <span class="copy">
      <button type="button" class="small" onClick={copy} aria-label={label}>
        Copy
      </button>
      <span role="status" class="muted">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text instead' : ''}
      </span>
    </span>
  );
}

const statusTone: Record<string, string> = {
  delivered: 'good',
  sent: 'good',
  verified: 'good',
  active: 'good',
  queued: 'neutral',
  processing: 'neutral',
  scheduled: 'neutral',
  waiting: 'warn',
  pending: 'warn',
  partially_verified: 'warn',
  temporary_failure: 'warn',
  retired: 'neutral',
  cancelled: 'neutral',
  bounced: 'bad',
  failed: 'bad',
  suppressed: 'bad',
  complained: 'bad',
  mismatch: 'bad',
  unreachable: 'bad',
  revoked: 'bad',
  expired: 'warn',
};

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge ${statusTone[status] ?? 'neutral'}`}>{status}</span>;
}

export function Time({ value }: { value: string | null | undefined }) {
  if (value === null || value === undefined) return <span class="muted">—</span>;
  return <time dateTime={value}>{displayDate(value)}</time>;
}

/** A button that asks once more before it acts (no browser dialog). */
export function ConfirmButton({
  label,
  name,
  question,
  onConfirm,
  busy,
  danger,
}: {
  label: string;
  /** The accessible name when the label alone is ambiguous (a button per table row). */
  name?: string;
  /** Text, or text with a control the confirmation needs (a rotation's grace period). */
  question: ComponentChildren;
  onConfirm: () => void;
  busy?: boolean;
  danger?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button
        type="button"
        class={danger ? 'danger' : ''}
        disabled={busy}
        aria-label={name}
        onClick={() => setAsking(true)}
      >
        {label}
      </button>
    );
  return (
    <span class="confirm">
      <span>{question}</span>
      <button
        type="button"
        class={danger ? 'danger' : ''}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        No
      </button>
    </span>
  );
}

/** The From and To inputs of a date filter (datetime-local, in the browser's time zone). */
export function DateRange({
  from,
  to,
  onFrom,
  onTo,
}: {
  from: string;
  to: string;
  onFrom: (value: string) => void;
  onTo: (value: string) => void;
}) {
  return (
    <>
      <label>
        From{' '}
        <input type="datetime-local" value={from} onInput={(event) => onFrom(event.currentTarget.value)} />
      </label>
      <label>
        To <input type="datetime-local" value={to} onInput={(event) => onTo(event.currentTarget.value)} />
      </label>
    </>
  );
}
