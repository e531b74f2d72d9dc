import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { dismiss, toasts } from './toast.js';
import { Icon } from './icons.js';

/** A labelled field; the server's problem with it (D5 `details`) is shown under it. */
export function Field(props: {
  label: string;
  error?: string | undefined;
  hint?: string | undefined;
  children: (id: string, describedBy: string | undefined) => ComponentChildren;
}) {
  const id = useId();
  const errId = props.error ? `${id}-err` : props.hint ? `${id}-hint` : undefined;
  return (
    <div class={`field${props.error ? ' has-error' : ''}`}>
      <label for={id}>{props.label}</label>
      {props.children(id, errId)}
      {props.error ? (
        <p class="field-error" id={errId} role="alert">
          {props.error}
        </p>
      ) : props.hint ? (
        <p class="field-hint" id={errId}>
          {props.hint}
        </p>
      ) : null}
    </div>
  );
}

let ids = 0;
export function useId(): string {
  const [id] = useState(() => `f${++ids}`);
  return id;
}

/**
 * A modal dialog on the native <dialog>: focus moves in and is trapped, Escape closes it,
 * focus returns to where it was.
 */
export function Dialog(props: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  const titleId = useId();
  return (
    <dialog
      ref={ref}
      class={`dialog${props.wide ? ' wide' : ''}`}
      aria-labelledby={titleId}
      onClose={props.onClose}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
      onClick={(e) => {
        if (e.target === ref.current) props.onClose(); // a click on the backdrop
      }}
    >
      {props.open && (
        <div class="dialog-body">
          <header class="dialog-head">
            <h2 id={titleId}>{props.title}</h2>
            <button type="button" class="icon-btn" aria-label="Close" onClick={props.onClose}>
              <Icon name="x" />
            </button>
          </header>
          {props.children}
        </div>
      )}
    </dialog>
  );
}

/** "Are you sure?" with the consequence spelled out. */
export function Confirm(props: {
  open: boolean;
  title: string;
  body: ComponentChildren;
  confirm: string;
  danger?: boolean;
  onConfirm: () => void | Promise<void>;
  onClose: () => void;
}) {
  const [busy, setBusy] = useState(false);
  return (
    <Dialog title={props.title} open={props.open} onClose={props.onClose}>
      <div class="confirm-text">{props.body}</div>
      <div class="actions">
        <button type="button" class="btn" onClick={props.onClose}>
          Cancel
        </button>
        <button
          type="button"
          class={`btn ${props.danger ? 'danger' : 'primary'}`}
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            try {
              await props.onConfirm();
            } finally {
              setBusy(false);
            }
          }}
        >
          {props.confirm}
        </button>
      </div>
    </Dialog>
  );
}

/** A colour per name (snowflake ids share their low bits, so not the id). */
const hue = (name: string): number =>
  [...name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % 8;

const initials = (name: string): string =>
  name
    .split(/\s+/)
    .map((w) => [...w][0] ?? '')
    .join('')
    .slice(0, 2)
    .toUpperCase();

/**
 * An avatar: the image when it is on this origin (the CSP allows no other, D55), else the
 * initials on a colour derived from the id.
 */
export function Avatar(props: {
  name: string;
  url?: string | undefined;
  id: number;
  size?: number;
}) {
  const [failed, setFailed] = useState(false);
  const size = props.size ?? 32;
  const sameOrigin = props.url !== undefined && props.url.startsWith(location.origin + '/');
  const isDefault = props.url?.endsWith('/cdn/avatars/default.png') ?? true;
  const style = { width: `${size}px`, height: `${size}px` };
  if (sameOrigin && !failed && !isDefault)
    return (
      <img
        class="avatar"
        src={props.url}
        alt=""
        width={size}
        height={size}
        style={style}
        onError={() => setFailed(true)}
      />
    );
  return (
    <span class={`avatar initials hue${hue(props.name)}`} style={style} aria-hidden="true">
      {initials(props.name)}
    </span>
  );
}

export function Toasts() {
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.value.map((t) => (
        <div key={t.id} class={`toast ${t.kind}`}>
          <span>{t.text}</span>
          <button type="button" class="icon-btn" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            <Icon name="x" size={14} />
          </button>
        </div>
      ))}
    </div>
  );
}

/** Copies text and says so next to the button (no toast). */
export function CopyButton(props: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="btn"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(props.text);
        } catch {
          // Clipboard refused (http origin, permissions): select-and-copy fallback.
          const ta = document.createElement('textarea');
          ta.value = props.text;
          document.body.append(ta);
          ta.select();
          document.execCommand('copy');
          ta.remove();
        }
        setDone(true);
        setTimeout(() => setDone(false), 2000);
      }}
    >
      <Icon name="copy" size={16} /> {done ? 'Copied' : (props.label ?? 'Copy')}
    </button>
  );
}

export function Spinner({ label = 'Loading' }: { label?: string }) {
  return <span class="spinner" role="status" aria-label={label} />;
}

export type InputEvent = JSX.TargetedEvent<HTMLInputElement, Event>;
export const val = (e: Event): string => (e.currentTarget as HTMLInputElement).value;
