// Small shared pieces: page frame, alerts, status badges, copy buttons, labelled fields.
import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title">{props.title}</h1>
        {props.actions ? <div class="page-actions">{props.actions}</div> : null}
      </header>
      {props.children}
    </section>
  );
}

export function Alert(props: { error: string | null | undefined }) {
  return props.error ? <p class="alert" role="alert">{props.error}</p> : null;
}

export function Loading(props: { loading: boolean }) {
  return props.loading ? <p class="muted" aria-live="polite">Loading…</p> : null;
}

const TONES: Record<string, string> = {
  RUNNING: 'ok', complete: 'ok', Confirmed: 'ok',
  START_FAILED: 'bad', STOP_FAILED: 'bad', error: 'bad',
  PROVISIONING: 'busy', STARTING: 'busy', STOPPING: 'busy', DELETING: 'busy', encoding: 'busy', queued: 'busy', uploaded: 'busy',
};

export function Status(props: { value: string }) {
  return <span class={`status status-${TONES[props.value] ?? 'idle'}`} data-status={props.value}>{props.value}</span>;
}

export function CopyButton(props: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setDone(true);
      setTimeout(() => setDone(false), 1500);
    } catch {
      // Clipboard refused (no secure context): select the text so the operator can copy it by hand.
      const range = document.createRange();
      const node = document.getElementById(`copy-${props.label}`);
      if (node) {
        range.selectNodeContents(node);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      }
    }
  };
  return (
    <span class="copy">
      <code id={`copy-${props.label}`}>{props.text}</code>
      <button type="button" class="small" onClick={copy} aria-label={`Copy ${props.label}`}>{done ? 'Copied' : 'Copy'}</button>
    </span>
  );
}

/** A labelled control; `error` is the server's word on its value (a 400's `fields`), shown under it. */
export function Field(props: { label: string; children: ComponentChildren; hint?: string; error?: string | undefined }) {
  return (
    <label class={props.error ? 'field invalid' : 'field'}>
      <span class="field-label">{props.label}</span>
      {props.children}
      {props.hint ? <span class="muted small-text">{props.hint}</span> : null}
      {props.error ? <span class="field-error small-text">{props.error}</span> : null}
    </label>
  );
}

export function Table(props: { label: string; children: ComponentChildren } & JSX.HTMLAttributes<HTMLDivElement>) {
  const { label, children, ...rest } = props;
  return (
    <div class="table-wrap" {...rest}>
      <table aria-label={label}>{children}</table>
    </div>
  );
}

export function Progress(props: { value: number; label: string }) {
  const pct = Math.max(0, Math.min(100, Math.round(props.value)));
  return (
    <span class="progress-line">
      <progress max={100} value={pct} aria-label={props.label} />
      <span class="small-text">{pct}%</span>
    </span>
  );
}

export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');
