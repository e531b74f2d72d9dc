import { signal } from '@preact/signals';
import { Fragment } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { del, describe, put } from '../lib/api.js';
import { safeUrl } from '../lib/markdown.js';
import { TOUCH, useMedia } from '../lib/media.js';
import { clock as time, dayKey, dayName, stamp } from '../lib/time.js';
import type { Attachment, Embed, Message } from '../lib/types.js';
import { type ChannelLog, markRead, me, readStates } from '../state/store.js';
import { Avatar, Confirm, Spinner } from '../ui/kit.js';
import { Icon } from '../ui/icons.js';
import { renderMarkdown, type MentionNames } from '../ui/markdown.js';
import { toast } from '../ui/toast.js';
import { Components, InteractionMarks } from './interactions.js';
import { editingId } from './compose-state.js';
import { previewText } from './mention-autocomplete.js';
import { MessageMenu } from './message-menu.js';
import { Reactions } from './reaction-picker.js';

/** The newest messages the DOM holds at the bottom (long channels stay smooth: issue #12). */
const WINDOW = 120;
/** how many more a scroll to the window's edge shows */
const STEP = 60;
/** the most messages in the DOM at any time, wherever the reader is (README) */
export const MAX_DOM = WINDOW + STEP;

export interface ViewerInfo {
  /** author ids that are bots (D49 `bots`) */
  bots: ReadonlySet<number>;
  /** avatars by user id, from the member list */
  avatars: ReadonlyMap<number, string>;
  /** may delete anyone's message (ADMINISTRATOR, D49 moderation) */
  moderator: boolean;
  /** how mentions read (D62) */
  names: MentionNames;
  /** D58: authors' name colours (their top coloured role), when known */
  nameColors?: ReadonlyMap<number, string>;
  /** a click on an author's name (a guild: the member's card and menu) */
  onAuthor?: (userId: number) => void;
  /** D63: may react (ADD_REACTIONS), pin (MANAGE_MESSAGES; anyone in a DM), reply (SEND_MESSAGES) */
  canReact?: boolean;
  canPin?: boolean;
  canReply?: boolean;
}

const authorStyle = (info: ViewerInfo, id: number) => {
  const color = info.nameColors?.get(id);
  return color === undefined ? undefined : { color };
};

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

function Body({ m, onMedia, names }: { m: Message; onMedia: () => void; names: MentionNames }) {
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
  return <Text content={m.content} names={names} />;
}

/** D62: the content rendered as markdown (elements from an allow-list, never HTML). */
function Text({ content, names }: { content: string; names: MentionNames }) {
  const nodes = useMemo(() => renderMarkdown(content, names), [content, names]);
  return <div class="text">{nodes}</div>;
}

/** D61: the server's resolved mentions say who is notified: me, a role of mine, or everyone. */
const mentionsMe = (m: Message, myRoles: ReadonlySet<number>): boolean =>
  m.mentionEveryone === true ||
  (me.value !== null && (m.mentions ?? []).includes(me.value.id)) ||
  (m.mentionRoles ?? []).some((r) => myRoles.has(r));

/** D61: the message a reply answers, above it (null: it was deleted). */
function ReplyTo({ ref_, names }: { ref_: Message['referencedMessage']; names: MentionNames }) {
  if (!ref_) return <div class="reply-to muted small">Original message was deleted</div>;
  const text = previewText(ref_, names);
  return (
    <button
      type="button"
      class="reply-to small"
      aria-label={`Reply to ${ref_.author.name}: jump to the message`}
      onClick={() => {
        const row = document.querySelector(`.msg[data-id="${ref_.id}"]`);
        row?.scrollIntoView({ block: 'center' });
        row?.classList.add('flash');
        setTimeout(() => row?.classList.remove('flash'), 1600);
      }}
    >
      <span class="author">@{names.user(ref_.author.id) ?? ref_.author.name}</span>{' '}
      <span class="reply-text">{text}</span>
    </button>
  );
}

/** D61: images inline (a click opens them large), other files as links with their size. */
function Attachments({ list, onMedia }: { list: Attachment[]; onMedia: () => void }) {
  const [open, setOpen] = useState<Attachment | null>(null);
  return (
    <div class="attachments">
      {list.map((a) =>
        a.contentType.startsWith('image/') ? (
          <button
            type="button"
            key={a.url}
            class="attachment-image"
            aria-label={`Open ${a.filename}`}
            onClick={() => setOpen(a)}
          >
            <img
              src={a.url}
              alt={a.filename}
              loading="lazy"
              width={a.width}
              height={a.height}
              onLoad={onMedia}
            />
          </button>
        ) : a.contentType.startsWith('video/') ? (
          <video key={a.url} class="media" controls preload="metadata" src={a.url} />
        ) : a.contentType.startsWith('audio/') ? (
          <audio key={a.url} class="media" controls preload="metadata" src={a.url} />
        ) : (
          <a key={a.url} class="attachment-file" href={a.url} target="_blank" rel="noopener">
            {a.filename} ({Math.ceil(a.size / 1024)} KiB)
          </a>
        ),
      )}
      {open && (
        <div
          class="lightbox"
          role="dialog"
          aria-label={open.filename}
          onClick={() => setOpen(null)}
          onKeyDown={(e) => e.key === 'Escape' && setOpen(null)}
        >
          <img src={open.url} alt={open.filename} />
          <a href={open.url} target="_blank" rel="noopener" onClick={(e) => e.stopPropagation()}>
            Open original
          </a>
        </div>
      )}
    </div>
  );
}

/** D61 bots' rich embeds and D71 link previews (images only from this platform's CDN). */
function EmbedView({ e, names }: { e: Embed; names: MentionNames }) {
  const color = e.color !== undefined ? `#${e.color.toString(16).padStart(6, '0')}` : undefined;
  const link = e.url && safeUrl(e.url) ? e.url : undefined;
  return (
    <div class={`embed ${e.type}`} style={color ? { borderLeftColor: color } : undefined}>
      {e.siteName && <div class="muted small">{e.siteName}</div>}
      {e.author && <div class="small embed-author">{e.author.name}</div>}
      {e.title &&
        (link ? (
          <a class="embed-title" href={link} target="_blank" rel="noopener noreferrer nofollow">
            {e.title}
          </a>
        ) : (
          <div class="embed-title">{e.title}</div>
        ))}
      {e.description && (
        <div class="text embed-description">
          {e.type === 'rich' ? renderMarkdown(e.description, names) : e.description}
        </div>
      )}
      {e.fields && (
        <div class="embed-fields">
          {e.fields.map((f, i) => (
            <div key={i} class={`embed-field${f.inline ? ' embed-field-inline' : ''}`}>
              <div class="small embed-field-name">{f.name}</div>
              <div class="text">{renderMarkdown(f.value, names)}</div>
            </div>
          ))}
        </div>
      )}
      {e.image && <img class="embed-image" src={e.image.url} alt="" loading="lazy" />}
      {e.footer && <div class="muted small">{e.footer.text}</div>}
    </div>
  );
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

/**
 * A touch screen has no hover: its actions would sit beside every message and squeeze the text
 * to a column. There a tap on a message shows its actions over it (as hover does with a mouse);
 * a tap elsewhere hides them. One message at a time.
 */
const selectedId = signal<number | null>(null);
/** Taps on these do their own thing (a link, a button, an image's lightbox, a text field). */
const OWN_TAP = 'a, button, input, textarea, select, summary, img, video, audio, [role="button"]';

function Item(props: {
  m: Message;
  compact: boolean;
  log: ChannelLog;
  info: ViewerInfo;
  onMedia: () => void;
}) {
  const { m, info } = props;
  const [editingHere, setEditing] = useState(false);
  // Up-arrow in the composer opens my last message (compose-state.ts)
  const editing = editingHere || editingId.value === m.id;
  const stopEditing = () => {
    setEditing(false);
    if (editingId.value === m.id) {
      editingId.value = null;
      // opened from the composer (Up-arrow): typing goes on there
      document.querySelector<HTMLTextAreaElement>('.composer-box textarea')?.focus();
    }
  };
  const [confirm, setConfirm] = useState(false);
  const touch = useMedia(TOUCH);
  const selected = touch && selectedId.value === m.id;
  const row = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (!selected) return;
    const away = (e: PointerEvent) => {
      if (!row.current?.contains(e.target as Node)) selectedId.value = null;
    };
    document.addEventListener('pointerdown', away);
    return () => document.removeEventListener('pointerdown', away);
  }, [selected]);
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
    <li
      ref={row}
      class={`msg${props.compact ? ' compact' : ''}${mentionsMe(m, info.names.myRoles) ? ' mentions-me' : ''}${selected ? ' selected' : ''}`}
      data-id={m.id}
      onClick={
        touch
          ? (e) => {
              if ((e.target as Element).closest(OWN_TAP) || editing) return;
              selectedId.value = selected ? null : m.id;
            }
          : undefined
      }
    >
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
        {m.referencedMessage !== undefined && (
          <ReplyTo ref_={m.referencedMessage} names={info.names} />
        )}
        {!props.compact && (
          <div class="msg-head">
            {info.onAuthor ? (
              <button
                type="button"
                class="author author-btn"
                style={authorStyle(info, m.author.id)}
                onClick={() => info.onAuthor?.(m.author.id)}
              >
                {m.author.name}
              </button>
            ) : (
              <span class="author" style={authorStyle(info, m.author.id)}>
                {m.author.name}
              </span>
            )}
            {info.bots.has(m.author.id) && <span class="tag">BOT</span>}
            {m.pinned && <span class="tag pinned">pinned</span>}
            <time
              class="muted small"
              dateTime={m.timestamp}
              title={new Date(m.timestamp).toLocaleString()}
            >
              {stamp(m.timestamp)}
            </time>
          </div>
        )}
        <InteractionMarks m={m} log={props.log} who={(id) => info.names.user(id)} />
        {editing ? (
          <Editor m={m} log={props.log} done={stopEditing} />
        ) : (
          <>
            {m.content !== '' && <Body m={m} onMedia={props.onMedia} names={info.names} />}
            {m.attachments && <Attachments list={m.attachments} onMedia={props.onMedia} />}
            {m.embeds?.map((e, i) => (
              <EmbedView key={i} e={e} names={info.names} />
            ))}
            {m.components && <Components m={m} log={props.log} />}
            {m.reactions && <Reactions m={m} log={props.log} canReact={info.canReact ?? true} />}
            {m.editedTimestamp && (
              <span class="muted small" title={new Date(m.editedTimestamp).toLocaleString()}>
                (edited)
              </span>
            )}
          </>
        )}
      </div>
      {!editing && (
        <div class="msg-actions">
          {/* D65: an ephemeral message (flags 1) is not stored: nothing to reply to, react to or pin */}
          {((m.flags ?? 0) & 1) === 0 && (
            <MessageMenu
              m={m}
              log={props.log}
              canReact={info.canReact ?? true}
              canPin={info.canPin ?? false}
              canReply={info.canReply ?? true}
            />
          )}
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
 * upwards when they scroll up (D16 `before=`). The DOM holds a window of at most MAX_DOM
 * messages (README: long channels stay light): scrolling back slides the window up and drops
 * what falls far below, scrolling down slides it back, and returning to the bottom keeps the
 * newest WINDOW. Whatever the reader looks at stays where it is on the screen when the window
 * moves (an anchor element is measured before and after).
 */
/** Renders again just after local midnight: a tab left open overnight renames "Today". */
function useNewDay(): void {
  const [, setDay] = useState(() => dayKey(Date.now()));
  useEffect(() => {
    let t: ReturnType<typeof setTimeout>;
    const arm = () => {
      const next = new Date();
      next.setHours(24, 0, 1, 0);
      t = setTimeout(() => {
        setDay(dayKey(Date.now()));
        arm();
      }, next.getTime() - Date.now());
    };
    arm();
    return () => clearTimeout(t);
  }, []);
}

export function MessageList(props: { log: ChannelLog; info: ViewerInfo; label: string }) {
  const { log } = props;
  const items = log.items.value;
  useNewDay();
  // D66 "New": where the unread part began when the channel was opened (the read mark moves on
  // as soon as the reader is at the bottom; the line stays until they leave the channel).
  const [readAtOpen] = useState(() => readStates.value.get(log.channelId) ?? 0);
  const unreadFrom = useRef<number | null | undefined>(undefined);
  if (unreadFrom.current === undefined && items.length > 0)
    unreadFrom.current =
      items.find((m) => m.id > readAtOpen && m.author.id !== me.value?.id)?.id ?? null;
  // my own message after it says I have caught up: the line goes (as in Discord)
  for (let i = items.length - 1; unreadFrom.current && i >= 0; i--) {
    const m = items[i]!;
    if (m.id <= unreadFrom.current) break;
    if (m.author.id === me.value?.id) unreadFrom.current = null;
  }
  // The window: the newest id shown (null: follow the newest) and how many are shown.
  const [win, setWin] = useState<{ end: number | null; size: number }>({
    end: null,
    size: WINDOW,
  });
  const scroller = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  /** an element to keep in place through the next render: its id and its offset in view */
  const anchor = useRef<{ id: number; top: number } | null>(null);
  const [newBelow, setNewBelow] = useState(false);
  /** a masked link's address, asked about before leaving (D62) */
  const [leaving, setLeaving] = useState<string | null>(null);

  /** Spoilers open on click or Enter; a masked link first says where it goes. */
  const onActivate = (e: Event) => {
    const target = e.target as Element;
    const spoiler = target.closest('.spoiler');
    if (spoiler && !spoiler.classList.contains('shown')) {
      e.preventDefault();
      spoiler.classList.add('shown');
      spoiler.setAttribute('aria-label', 'Spoiler');
      return;
    }
    const a = target.closest<HTMLAnchorElement>('a[data-masked]');
    if (a) {
      e.preventDefault();
      setLeaving(a.href);
    }
  };

  const endIdx = win.end === null ? items.length : upperIndex(items, win.end);
  const startIdx = Math.max(0, endIdx - win.size);
  const shown = items.slice(startIdx, endIdx);
  const last = shown[shown.length - 1]?.id;
  // the latest values for the handlers below (scroll events and page loads outlive a render)
  const now = useRef({ items, startIdx, endIdx });
  now.current = { items, startIdx, endIdx };

  useEffect(() => {
    setWin({ end: null, size: WINDOW });
    atBottom.current = true;
    anchor.current = null;
    setNewBelow(false);
    if (!log.loaded && !log.loading.value) log.loadNewest().catch((x) => toast(describe(x)));
  }, [log]);

  const stick = () => {
    const el = scroller.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  };

  /** Remembers where the message `id` is on the screen, to put it back there after a render. */
  const hold = (id: number | undefined) => {
    const el = scroller.current;
    const row = id === undefined ? null : el?.querySelector(`[data-id="${id}"]`);
    anchor.current =
      el && row && id !== undefined
        ? { id, top: row.getBoundingClientRect().top - el.getBoundingClientRect().top }
        : null;
  };

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const a = anchor.current;
    anchor.current = null;
    const row = a ? el.querySelector(`[data-id="${a.id}"]`) : null;
    if (a && row) {
      el.scrollTop += row.getBoundingClientRect().top - el.getBoundingClientRect().top - a.top;
    } else if (atBottom.current) {
      el.scrollTop = el.scrollHeight;
    }
  });

  // A new message arrived while the reader is up the page (not older pages read in).
  const newestSeen = useRef<number | undefined>(undefined);
  useEffect(() => {
    const newest = items[items.length - 1]?.id;
    const before = newestSeen.current;
    newestSeen.current = newest;
    if (!atBottom.current && before !== undefined && newest !== undefined && newest > before)
      setNewBelow(true);
  }, [items]);

  // Read marks: the newest message counts as read when the reader is at the bottom.
  useEffect(() => {
    if (
      last !== undefined &&
      win.end === null &&
      atBottom.current &&
      document.visibilityState === 'visible'
    )
      markRead(log.channelId, last);
  }, [last, log, win.end]);

  /** Shows STEP older messages above, reading a page first if memory has none. */
  const growUp = () => {
    const { items: all, startIdx: from, endIdx: to } = now.current;
    if (from > 0) {
      hold(all[from]?.id);
      const start = Math.max(0, from - STEP);
      const end = Math.min(to, start + MAX_DOM); // what falls far below leaves the DOM
      setWin({ end: all[end - 1]?.id ?? null, size: end - start });
    } else if (log.hasOlder.value && !log.loading.value) {
      log
        .loadOlder()
        .then(() => growUp())
        .catch((x) => toast(describe(x)));
    }
  };

  /** Shows STEP newer messages below (the window was slid up), back to following the newest. */
  const growDown = () => {
    const { items: all, startIdx: from, endIdx: to } = now.current;
    if (to >= all.length) return;
    hold(all[to - 1]?.id);
    const end = Math.min(all.length, to + STEP);
    const start = Math.max(from, end - MAX_DOM);
    setWin({ end: all[end - 1]?.id ?? null, size: end - start });
  };

  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    const fromBottom = el.scrollHeight - el.scrollTop - el.clientHeight;
    if (fromBottom < 80 && endIdx >= items.length) {
      // At the real bottom: follow the newest again, and drop what scrolled far up.
      atBottom.current = true;
      setNewBelow(false);
      if (last !== undefined) markRead(log.channelId, last);
      if (win.end !== null || win.size > WINDOW) setWin({ end: null, size: WINDOW });
    } else {
      atBottom.current = false;
      // Away from the bottom the window stops following, so new messages do not move the page.
      if (win.end === null && last !== undefined) setWin((w) => ({ ...w, end: last }));
      if (fromBottom < 300) growDown();
    }
    if (el.scrollTop < 300) growUp();
  };

  const jumpToPresent = () => {
    atBottom.current = true;
    anchor.current = null;
    setWin({ end: null, size: WINDOW });
    setNewBelow(false);
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
  };

  return (
    <div class="messages-wrap">
      <div
        class="messages"
        ref={scroller}
        onScroll={onScroll}
        onClick={onActivate}
        onKeyDown={(e) => {
          if ((e.key === 'Enter' || e.key === ' ') && (e.target as Element).matches('.spoiler'))
            onActivate(e);
        }}
        tabIndex={0}
        aria-label={props.label}
      >
        <div class="history-top">
          {log.loading.value ? (
            <Spinner label="Loading older messages" />
          ) : !log.hasOlder.value && startIdx === 0 ? (
            <p class="muted small">This is the beginning of the conversation.</p>
          ) : null}
        </div>
        <ol class="msg-list" role="log" aria-live="polite" aria-relevant="additions">
          {shown.map((m, i) => {
            const prev = shown[i - 1];
            // a new day starts with its name across the list ("Today", "Yesterday", the date)
            const newDay = prev === undefined || dayKey(prev.timestamp) !== dayKey(m.timestamp);
            const compact =
              !newDay &&
              m.id !== unreadFrom.current &&
              prev !== undefined &&
              prev.author.id === m.author.id &&
              Date.parse(m.timestamp) - Date.parse(prev.timestamp) < 5 * 60_000;
            const item = (
              <Item
                key={m.id}
                m={m}
                compact={compact}
                log={log}
                info={props.info}
                onMedia={stick}
              />
            );
            const isNew = m.id === unreadFrom.current;
            return newDay || isNew ? (
              <Fragment key={m.id}>
                {newDay && (
                  <li class="day-divider" role="separator" aria-label={dayName(m.timestamp)}>
                    <span>{dayName(m.timestamp)}</span>
                  </li>
                )}
                {isNew && (
                  <li class="new-divider" role="separator" aria-label="New messages">
                    <span>New</span>
                  </li>
                )}
                {item}
              </Fragment>
            ) : (
              item
            );
          })}
        </ol>
      </div>
      {(newBelow || endIdx < items.length - STEP) && (
        <button type="button" class="btn small new-below" onClick={jumpToPresent}>
          {newBelow ? 'New messages ↓' : 'Jump to the present ↓'}
        </button>
      )}
      <Confirm
        open={leaving !== null}
        title="Leave Parley?"
        body={
          <>
            <p>This link goes to</p>
            <p class="leaving-url">{leaving}</p>
          </>
        }
        confirm="Open link"
        onConfirm={() => {
          if (leaving) window.open(leaving, '_blank', 'noopener,noreferrer');
          setLeaving(null);
        }}
        onClose={() => setLeaving(null)}
      />
    </div>
  );
}

/** The index after the last message with id ≤ `id` (items are sorted by id). */
function upperIndex(items: readonly Message[], id: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid]!.id <= id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
