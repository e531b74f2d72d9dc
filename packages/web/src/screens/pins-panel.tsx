import { useEffect, useState } from 'preact/hooks';
import { describe, get } from '../lib/api.js';
import type { Message } from '../lib/types.js';
import { channelLog, pinsChanged, type ChannelLog } from '../state/store.js';
import { Icon } from '../ui/icons.js';
import { Dialog, Spinner } from '../ui/kit.js';
import { renderMarkdown, type MentionNames } from '../ui/markdown.js';
import { setPinned } from './message-menu.js';
import { when } from '../lib/time.js';

/** D63: a channel's pins live beside its messages: /channels/:id/pins or /dm/channels/:id/pins. */
export const pinsBase = (log: ChannelLog): string => log.base.replace(/\/messages$/, '/pins');

/**
 * D63: the channel's pinned messages, newest pin first (GET …/pins), read again whenever the
 * panel opens or CHANNEL_PINS_UPDATE says they changed; a click jumps to the message.
 */
export function PinsButton(props: {
  channelId: number;
  kind: 'guild' | 'dm';
  canPin: boolean;
  names?: MentionNames;
}) {
  const [open, setOpen] = useState(false);
  const [list, setList] = useState<Message[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const log = channelLog(props.channelId, props.kind);
  const stamp = pinsChanged.value.get(props.channelId) ?? 0;
  useEffect(() => {
    if (!open) return;
    let live = true;
    get<{ messages: Message[] }>(pinsBase(log))
      .then((r) => live && setList(r.messages))
      .catch((x) => live && setError(describe(x)));
    return () => {
      live = false;
    };
  }, [open, stamp, log]);
  const jump = (id: number) => {
    setOpen(false);
    const row = document.querySelector(`.msg[data-id="${id}"]`);
    row?.scrollIntoView({ block: 'center' });
    row?.classList.add('flash');
    setTimeout(() => row?.classList.remove('flash'), 1600);
  };
  return (
    <>
      <button
        type="button"
        class={`icon-btn${open ? ' on' : ''}`}
        aria-label="Pinned messages"
        title="Pinned messages"
        onClick={() => {
          setList(null);
          setError(null);
          setOpen(true);
        }}
      >
        <Icon name="pin" />
      </button>
      <Dialog title="Pinned messages" open={open} onClose={() => setOpen(false)} wide>
        {error ? (
          <p class="field-error">{error}</p>
        ) : list === null ? (
          <Spinner label="Loading pins" />
        ) : list.length === 0 ? (
          <p class="muted">Nothing is pinned in this channel yet.</p>
        ) : (
          <ul class="pins-list" aria-label="Pinned messages">
            {list.map((m) => (
              <li key={m.id} class="pin">
                <div class="pin-head small">
                  <strong>{m.author.name}</strong> <span class="muted">{when(m.timestamp)}</span>
                </div>
                <div class="text">
                  {m.content
                    ? renderMarkdown(m.content, props.names)
                    : m.attachments
                      ? `${m.attachments.length} attachment(s)`
                      : ''}
                </div>
                <div class="pin-actions">
                  <button type="button" class="btn small" onClick={() => jump(m.id)}>
                    Jump
                  </button>
                  {props.canPin && (
                    <button
                      type="button"
                      class="btn small"
                      onClick={() =>
                        void setPinned(log, m, false).then(() =>
                          setList((l) => l?.filter((x) => x.id !== m.id) ?? null),
                        )
                      }
                    >
                      Unpin
                    </button>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
      </Dialog>
    </>
  );
}
