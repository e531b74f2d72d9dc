import { useEffect, useRef, useState } from 'preact/hooks';
import { Icon } from '../ui/icons.js';

/**
 * D61: files picked, pasted or dropped wait in a tray above the composer — an image as its
 * preview, anything else by name and size — each with a remove button, until the message is
 * sent: the files and the text typed as their caption go together in one message (1–10
 * attachments). Nothing is uploaded before Send.
 */
export const MAX_ATTACHMENTS = 10;

export interface Pending {
  key: number;
  file: File;
  /** an object URL for an image's preview (revoked when it leaves the tray) */
  preview: string | null;
}

let nextKey = 1;

export function useTray() {
  const [files, setFiles] = useState<Pending[]>([]);
  // the previews still held when the composer goes away (another channel) are freed
  const held = useRef<Pending[]>([]);
  held.current = files;
  useEffect(
    () => () => {
      for (const p of held.current) if (p.preview) URL.revokeObjectURL(p.preview);
    },
    [],
  );
  return {
    files,
    /** adds files; says how many did not fit */
    add(list: File[]): number {
      const room = Math.max(0, MAX_ATTACHMENTS - files.length);
      const taken = list.slice(0, room).map((file) => ({
        key: nextKey++,
        file,
        preview: file.type.startsWith('image/') ? URL.createObjectURL(file) : null,
      }));
      setFiles((f) => [...f, ...taken]);
      return list.length - taken.length;
    },
    remove(key: number): void {
      setFiles((f) => {
        const gone = f.find((p) => p.key === key);
        if (gone?.preview) URL.revokeObjectURL(gone.preview);
        return f.filter((p) => p.key !== key);
      });
    },
    clear(): void {
      setFiles((f) => {
        for (const p of f) if (p.preview) URL.revokeObjectURL(p.preview);
        return [];
      });
    },
  };
}

const size = (n: number): string =>
  n < 1024 * 1024 ? `${Math.max(1, Math.round(n / 1024))} KiB` : `${(n / 1048576).toFixed(1)} MiB`;

export function AttachmentTray(props: {
  files: readonly Pending[];
  onRemove: (key: number) => void;
  disabled?: boolean;
}) {
  if (props.files.length === 0) return null;
  return (
    <ul class="attachment-tray" aria-label="Files to send">
      {props.files.map((p) => {
        const name = p.file.name || 'pasted file';
        return (
          <li key={p.key} class="tray-item">
            {p.preview ? (
              <img src={p.preview} alt={name} />
            ) : (
              <span class="tray-file" aria-hidden="true">
                <Icon name="clip" size={22} />
              </span>
            )}
            <span class="tray-name small" title={name}>
              {name}
            </span>
            <span class="muted small">{size(p.file.size)}</span>
            <button
              type="button"
              class="icon-btn tray-remove"
              aria-label={`Remove ${name}`}
              disabled={props.disabled}
              onClick={() => props.onRemove(p.key)}
            >
              <Icon name="x" size={14} />
            </button>
          </li>
        );
      })}
    </ul>
  );
}
