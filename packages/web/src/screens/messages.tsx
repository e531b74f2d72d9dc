import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { del, describe, put } from '../lib/api.js';
import type { Message } from '../lib/types.js';
import { type ChannelLog, markRead, me } from '../state/store.js';
import { Avatar, Confirm, Spinner } from '../ui/kit.js';
import { Icon } from '../ui/icons.js';
import { toast } from '../ui/toast.js';

/** How many messages stay in the DOM at most (long channels stay smooth: issue #12). */
const WINDOW = 120;
const STEP = 60;

export interface ViewerInfo {
  /** author ids that are bots (D49 `bots`) */
  bots: ReadonlySet<number>;
  /** avatars by user id, from the member list */
  avatars: ReadonlyMap<number, string>;
  /** may delete anyone's message (ADMINISTRATOR, D49 moderation) */
  moderator: boolean;
}

const media = (content: string): 'image' | 'audio' | 'video' | null => {
  // D15/D23: uploads are {cdn_url}/files/<id>/<name> on this origin; msgType is not echoed, so
  // the kind comes from the name.
  if (!content.startsWith(`${location.origin}/cdn/files/`) || /\s/.test(content)) return null;
  const ext = content.split('.').pop()?.toLowerCase() ?? '';
  if (['png', 'jpg', 'jpeg', 'gif'].includes(ext)) return 'image';
  if (['mp3', 'wav'].includes(ext)) return 'audio';
  if (ext === 'mp4') return 'video';
  return null;
};

const time = (iso: string): string =>
  new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
const day = (iso: string): string =>
  new Date(iso).toLocaleDateString([], { year: 'numeric', month: 'short', day: 'numeric' });

function Body({ m, onMedia }: { m: Message; onMedia: () => void }) {
  const kind = media(m.content);
  const name = decodeURIComponent(m.content.split('/').pop() ?? '');
  if (kind === 'image')
    return (
      <a href={m.content} target="_blank" rel="noopener" class="media-link">
        <img class="media" src={m.content} alt={name} loading="lazy" onLoad={onMedia} />
      </a>
    );
  if (kind === 'audio')
    return <audio class="media" controls preload="metadata" src={m.content} aria-label={name} />;
  if (kind === 'video')
    return (
      <video
        class="media"
        controls
        preload="metadata"
        src={m.content}
        aria-label={name}
        onLoadedMetadata={onMedia}
      />
    );
  return <div class="text">{m.content}</div>;
}

function Editor(props: { m: Message; log: ChannelLog; done: () => void }) {
  const [text, setText] = useState(props.m.content);
  const [err, setErr] = useState<string | null>(null);
  const save = async () => {
    if (text.trim() === '' || text === props.m.content) return props.done();
    try {
      // D17: PUT …/messages/:id for guild and DM messages alike.
      const edited = await put<Message>(`${props.log.base}/${props.m.id}`, { content: text });
      props.log.update({ ...props.m, ...edited });
      props.done();
    } catch (x) {
      setErr(describe(x));
    }
  };
  return (
    <div class="editor">
      <textarea
        aria-label="Edit message"
        value={text}
        ref={(el) => el?.focus()}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void save();
          }
          if (e.key === 'Escape') {
            e.stopPropagation();
            props.done();
          }
        }}
      />
      {err && (
        <p class="field-error" role="alert">
          {err}
        </p>
      )}
      <div class="editor-actions">
        <span class="muted small">Enter to save · Escape to cancel</span>
        <button type="button" class="btn small" onClick={props.done}>
          Cancel
        </button>
        <button type="button" class="btn small primary" onClick={() => void save()}>
          Save
        </button>
      </div>
    </div>
  );
}

function Item(props: {
  m: Message;
  compact: boolean;
  log: ChannelLog;
  info: ViewerInfo;
  onMedia: () => void;
}) {
  const { m, info } = props;
  const [editing, setEditing] = useState(false);
  const [confirm, setConfirm] = useState(false);
  const mine = m.author.id === me.value?.id;
  const canDelete = mine || (info.moderator && m.guildId !== undefined);
  const remove = async () => {
    try {
      if (mine) await del(`${props.log.base}/${m.id}`);
      // D49: moderation, any author's message in a guild channel.
      else await del(`/app/v1/channels/${m.channelId}/messages/${m.id}`);
      props.log.remove(m.id);
    } catch (x) {
      toast(describe(x));
    }
    setConfirm(false);
  };
  return (
    <li class={`msg${props.compact ? ' compact' : ''}`} data-id={m.id}>
      {props.compact ? (
        <span class="msg-gutter muted small" aria-hidden="true">
          {time(m.timestamp)}
        </span>
      ) : (
        <Avatar
          name={m.author.name}
          id={m.author.id}
          url={info.avatars.get(m.author.id)}
          size={36}
        />
      )}
      <div class="msg-main">
        {!props.compact && (
          <div class="msg-head">
            <span class="author">{m.author.name}</span>
            {info.bots.has(m.author.id) && <span class="tag">BOT</span>}
            <time
              class="muted small"
              dateTime={m.timestamp}
              title={new Date(m.timestamp).toLocaleString()}
            >
              {day(m.timestamp)} {time(m.timestamp)}
            </time>
          </div>
        )}
        {editing ? (
          <Editor m={m} log={props.log} done={() => setEditing(false)} />
        ) : (
          <>
            <Body m={m} onMedia={props.onMedia} />
            {m.editedTimestamp && (
              <span class="muted small" title={new Date(m.editedTimestamp).toLocaleString()}>
                (edited)
              </span>
            )}
          </>
        )}
      </div>
      {!editing && (mine || canDelete) && (
        <div class="msg-actions">
          {mine && !media(m.content) && (
            <button
              type="button"
              class="icon-btn"
              aria-label="Edit message"
              onClick={() => setEditing(true)}
            >
              <Icon name="edit" size={16} />
            </button>
          )}
          {canDelete && (
            <button
              type="button"
              class="icon-btn"
              aria-label="Delete message"
              onClick={() => setConfirm(true)}
            >
              <Icon name="trash" size={16} />
            </button>
          )}
        </div>
      )}
      <Confirm
        open={confirm}
        title="Delete this message?"
        body={
          mine
            ? 'It is removed for everyone.'
            : `${m.author.name}'s message is removed for everyone.`
        }
        confirm="Delete"
        danger
        onConfirm={remove}
        onClose={() => setConfirm(false)}
      />
    </li>
  );
}

/**
 * The message list: oldest at the top, stuck to the bottom while the reader is there, paging
 * upwards when they scroll up (D16 `before=`), the scroll position kept when older messages are
 * added above (no jump), and at most WINDOW + STEP items in the DOM.
 */
export function MessageList(props: { log: ChannelLog; info: ViewerInfo; label: string }) {
  const { log } = props;
  const items = log.items.value;
  const [count, setCount] = useState(WINDOW);
  const scroller = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const lastHeight = useRef(0);
  const firstId = useRef<number | undefined>(undefined);
  const lastId = useRef<number | undefined>(undefined);
  const [newBelow, setNewBelow] = useState(false);

  const shown = items.slice(-count);
  const first = shown[0]?.id;
  const last = shown[shown.length - 1]?.id;

  useEffect(() => {
    setCount(WINDOW);
    atBottom.current = true;
    firstId.current = undefined;
    lastId.current = undefined;
    if (!log.loaded && !log.loading.value) log.loadNewest().catch((x) => toast(describe(x)));
  }, [log]);

  const stick = () => {
    const el = scroller.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  };

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    if (atBottom.current) {
      el.scrollTop = el.scrollHeight;
    } else if (first !== undefined && firstId.current !== undefined && first < firstId.current) {
      // Older messages were added above: keep what the reader sees where it was.
      el.scrollTop += el.scrollHeight - lastHeight.current;
    }
    if (
      !atBottom.current &&
      last !== undefined &&
      lastId.current !== undefined &&
      last > lastId.current
    )
      setNewBelow(true);
    firstId.current = first;
    lastId.current = last;
    lastHeight.current = el.scrollHeight;
  }, [first, last, shown.length]);

  // Read marks: the newest message counts as read when the reader is at the bottom.
  useEffect(() => {
    if (last !== undefined && atBottom.current && document.visibilityState === 'visible')
      markRead(log.channelId, last);
  }, [last, log]);

  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    const bottom = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
    atBottom.current = bottom;
    if (bottom) {
      setNewBelow(false);
      if (last !== undefined) markRead(log.channelId, last);
      // Back at the bottom: drop what scrolled far up (cap the DOM).
      if (count > WINDOW) setCount(WINDOW);
    }
    if (el.scrollTop < 300) {
      if (count < items.length) setCount((c) => Math.min(items.length, c + STEP));
      else if (log.hasOlder.value && !log.loading.value)
        log
          .loadOlder()
          .then(() => setCount((c) => c + STEP))
          .catch((x) => toast(describe(x)));
    }
  };

  return (
    <div class="messages-wrap">
      <div
        class="messages"
        ref={scroller}
        onScroll={onScroll}
        tabIndex={0}
        aria-label={props.label}
      >
        <div class="history-top">
          {log.loading.value ? (
            <Spinner label="Loading older messages" />
          ) : !log.hasOlder.value && count >= items.length ? (
            <p class="muted small">This is the beginning of the conversation.</p>
          ) : null}
        </div>
        <ol class="msg-list" role="log" aria-live="polite" aria-relevant="additions">
          {shown.map((m, i) => {
            const prev = shown[i - 1];
            const compact =
              prev !== undefined &&
              prev.author.id === m.author.id &&
              Date.parse(m.timestamp) - Date.parse(prev.timestamp) < 5 * 60_000;
            return (
              <Item
                key={m.id}
                m={m}
                compact={compact}
                log={log}
                info={props.info}
                onMedia={stick}
              />
            );
          })}
        </ol>
      </div>
      {newBelow && (
        <button
          type="button"
          class="btn small new-below"
          onClick={() => {
            atBottom.current = true;
            setCount(WINDOW);
            setNewBelow(false);
            const el = scroller.current;
            if (el) el.scrollTop = el.scrollHeight;
          }}
        >
          New messages ↓
        </button>
      )}
    </div>
  );
}
