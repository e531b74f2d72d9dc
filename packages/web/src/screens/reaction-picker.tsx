import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { del, describe, get, put } from '../lib/api.js';
import type { Message } from '../lib/types.js';
import type { ChannelLog } from '../state/store.js';
import { drawsInColour, newestDrawn } from '../lib/emoji-support.js';
import { Dialog } from '../ui/kit.js';
import { toast } from '../ui/toast.js';

/**
 * D63 reactions in the web app: the picker (every Unicode emoji, searchable by its CLDR name,
 * from the maintained `unicode-emoji-json` data set, loaded only when a picker first opens so
 * the first screen stays light), the counts under a message with mine highlighted, and who
 * reacted on hover or focus (GET …/reactions/:emoji).
 */
interface EmojiData {
  name: string;
  emojis: { emoji: string; name: string; slug: string; emoji_version: string }[];
}

let all: Promise<EmojiData[]> | null = null;
/** The whole data set (every release), loaded once. */
const loadAll = (): Promise<EmojiData[]> =>
  (all ??= import('unicode-emoji-json/data-by-group.json').then(
    (m) => (m as unknown as { default: EmojiData[] }).default,
  ));

let loading: Promise<EmojiData[]> | null = null;
/** The data set, less the emoji of releases newer than this device's font draws (no "tofu"). */
const loadEmoji = (): Promise<EmojiData[]> =>
  (loading ??= loadAll().then((groups) => {
    const newest = newestDrawn(groups.flatMap((g) => g.emojis));
    if (newest === null) return groups;
    return groups.map((g) => ({
      ...g,
      emojis: g.emojis.filter((e) => Number(e.emoji_version) <= newest),
    }));
  }));

/** the first row: what people react with most */
export const QUICK = ['👍', '❤️', '😂', '🎉', '😮', '😢', '👀', '✅'];

/** PUT (add) or DELETE (take back) my reaction: D63 …/reactions/:emoji/@me */
export async function react(log: ChannelLog, messageId: number, emoji: string, on: boolean) {
  const url = `${log.base}/${messageId}/reactions/${encodeURIComponent(emoji)}/@me`;
  try {
    if (on) await put(url);
    else await del(url);
  } catch (x) {
    toast(describe(x));
  }
}

export function ReactionPicker(props: {
  open: boolean;
  onPick: (e: string) => void;
  onClose: () => void;
}) {
  const [groups, setGroups] = useState<EmojiData[] | null>(null);
  const [q, setQ] = useState('');
  const search = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (!props.open) return;
    setQ('');
    loadEmoji()
      .then(setGroups)
      .catch((x) => toast(describe(x)));
    queueMicrotask(() => search.current?.focus());
  }, [props.open]);
  const shown = useMemo(() => {
    if (!groups) return [];
    const words = q.trim().toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length === 0) return groups;
    const hits = groups
      .flatMap((g) => g.emojis)
      .filter((e) => words.every((w) => e.name.toLowerCase().includes(w)));
    return [{ name: `Results for “${q.trim()}”`, emojis: hits.slice(0, 160) }];
  }, [groups, q]);
  const pick = (e: string) => {
    props.onPick(e);
    props.onClose();
  };
  return (
    <Dialog title="Add a reaction" open={props.open} onClose={props.onClose}>
      <div class="emoji-picker">
        <input
          ref={search}
          type="search"
          class="input"
          aria-label="Search emoji"
          placeholder="Search emoji (party, heart…)"
          value={q}
          onInput={(e) => setQ(e.currentTarget.value)}
          onKeyDown={(e) => {
            const first = shown[0]?.emojis[0];
            if (e.key === 'Enter' && first && q.trim()) {
              e.preventDefault();
              pick(first.emoji);
            }
          }}
        />
        {!q.trim() && (
          <div class="emoji-grid quick" aria-label="Frequent">
            {QUICK.map((e) => (
              <button
                type="button"
                key={e}
                class="emoji-btn"
                aria-label={e}
                onClick={() => pick(e)}
              >
                {e}
              </button>
            ))}
          </div>
        )}
        <div class="emoji-scroll">
          {groups === null ? (
            <p class="muted small">Loading emoji…</p>
          ) : shown[0]?.emojis.length === 0 ? (
            <p class="muted small">No emoji found.</p>
          ) : (
            shown.map((g) => (
              <section key={g.name}>
                <h3 class="section-title">{g.name}</h3>
                <div class="emoji-grid">
                  {g.emojis.map((e) => (
                    <button
                      type="button"
                      key={e.emoji}
                      class="emoji-btn"
                      title={e.name}
                      aria-label={e.name}
                      onClick={() => pick(e.emoji)}
                    >
                      {e.emoji}
                    </button>
                  ))}
                </div>
              </section>
            ))
          )}
        </div>
      </div>
    </Dialog>
  );
}

/** D63: who reacted with one emoji (the first 25), read when the pointer or focus arrives. */
function Who({ log, m, emoji }: { log: ChannelLog; m: Message; emoji: string }) {
  const [names, setNames] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    get<{ users: { name: string }[]; hasMore: boolean }>(
      `${log.base}/${m.id}/reactions/${encodeURIComponent(emoji)}?limit=25`,
    )
      .then((r) => {
        if (live)
          setNames(r.users.map((u) => u.name).join(', ') + (r.hasMore ? ' and others' : ''));
      })
      .catch(() => live && setNames(''));
    return () => {
      live = false;
    };
  }, [emoji, m.reactions]);
  return (
    <span class="reaction-who" role="tooltip">
      {names === null ? (
        '…'
      ) : (
        <>
          <ReactionEmoji emoji={emoji} /> {names}
        </>
      )}
    </span>
  );
}

/** The counts under a message: mine highlighted, a click adds or takes back mine, + picks. */
export function Reactions({
  m,
  log,
  canReact,
}: {
  m: Message;
  log: ChannelLog;
  canReact: boolean;
}) {
  const [hover, setHover] = useState<string | null>(null);
  const [picking, setPicking] = useState(false);
  return (
    <div class="reactions">
      {(m.reactions ?? []).map((r) => (
        <span
          key={r.emoji}
          class="reaction-wrap"
          onMouseEnter={() => setHover(r.emoji)}
          onMouseLeave={() => setHover(null)}
          onFocusIn={() => setHover(r.emoji)}
          onFocusOut={() => setHover(null)}
        >
          <button
            type="button"
            class={`reaction${r.me ? ' me' : ''}`}
            aria-pressed={r.me}
            aria-label={`${r.emoji} ${r.count}${r.me ? ', yours' : ''}`}
            disabled={!canReact && !r.me}
            onClick={() => void react(log, m.id, r.emoji, !r.me)}
          >
            <ReactionEmoji emoji={r.emoji} /> <span class="count">{r.count}</span>
          </button>
          {hover === r.emoji && <Who log={log} m={m} emoji={r.emoji} />}
        </span>
      ))}
      {canReact && (
        <button
          type="button"
          class="reaction add"
          aria-label="Add a reaction"
          title="Add a reaction"
          onClick={() => setPicking(true)}
        >
          +
        </button>
      )}
      {/* one picker in the DOM only while it is open (the list holds up to 180 messages) */}
      {picking && (
        <ReactionPicker
          open={picking}
          onClose={() => setPicking(false)}
          onPick={(e) => void react(log, m.id, e, true)}
        />
      )}
    </div>
  );
}

/** Whether this device draws each emoji met under a message (measured once per emoji). */
const drawn = new Map<string, boolean | undefined>();

/** An emoji's short name (`:shaking_face:`), from the data set, or null when it has none. */
const shortName = (emoji: string): Promise<string | null> =>
  loadAll().then((groups) => {
    const bare = emoji.replace(/\uFE0F/g, '');
    for (const g of groups)
      for (const e of g.emojis) if (e.emoji.replace(/\uFE0F/g, '') === bare) return `:${e.slug}:`;
    return null;
  });

/**
 * A reaction's emoji as this device can show it. Someone on a newer device may react with an
 * emoji this device's font lacks (the picker here offers only what it draws): instead of an
 * empty box, its short name — `:shaking_face:` — as Slack writes emoji it cannot show.
 */
function ReactionEmoji({ emoji }: { emoji: string }) {
  if (!drawn.has(emoji)) drawn.set(emoji, drawsInColour(emoji));
  const missing = drawn.get(emoji) === false;
  const [name, setName] = useState<string | null>(null);
  useEffect(() => {
    if (!missing) return;
    shortName(emoji)
      .then(setName)
      .catch(() => setName(null));
  }, [emoji, missing]);
  if (!missing) return <>{emoji}</>;
  return (
    <span class="emoji-missing" title={`${name ?? 'An emoji'} (this device has no picture for it)`}>
      {name ?? '?'}
    </span>
  );
}
