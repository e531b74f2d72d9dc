import type { SearchResult } from '@parley/protocol';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { describe, get } from '../lib/api.js';
import { PHONE, useMedia } from '../lib/media.js';
import { when } from '../lib/time.js';
import { navigate } from '../lib/router.js';
import {
  dateBounds,
  HAS_VALUES,
  highlight,
  highlightTerms,
  parseSearch,
  type SearchFilters,
} from '../lib/search-query.js';
import type { Guild, Message, MessageList } from '../lib/types.js';
import { loadMembers, members } from '../state/store.js';
import { Avatar, Spinner } from '../ui/kit.js';
import { Icon } from '../ui/icons.js';
import { renderMarkdown, NO_NAMES } from '../ui/markdown.js';
import './search.css';

/**
 * D67: the search box of a guild's channel header. It reads `from:name in:#channel has:image
 * before:2026-01-01 after:… pinned:true` plus free words (lib/search-query.ts), asks
 * `GET /api/v1/guilds/:id/messages/search`, and shows the hits grouped by channel with the
 * matched words marked (text nodes and <mark>, never HTML). A click opens the message in its
 * context: the page around it from the history route (D16 has no `around`: `before` id+1 and
 * `after` id), paged both ways from there.
 */
type View =
  | { kind: 'closed' }
  | { kind: 'results'; query: string; terms: string[]; result: SearchResult; offset: number }
  | { kind: 'error'; query: string; message: string }
  | { kind: 'context'; back: View; message: Message; terms: string[] };

const PAGE = 25;

/** Free words and filters as the route's parameters; names that match nothing are problems. */
export function searchParams(
  f: SearchFilters,
  guild: Guild,
  memberNames: ReadonlyMap<string, number>,
): { params: URLSearchParams; problems: string[] } {
  const p = new URLSearchParams();
  const problems = [...f.problems];
  if (f.q.trim()) p.set('q', f.q);
  if (f.from !== undefined) {
    const id = memberNames.get(f.from.toLowerCase());
    if (id === undefined) problems.push(`from:${f.from} (no such member)`);
    else p.set('authorId', String(id));
  }
  if (f.in !== undefined) {
    const name = f.in.toLowerCase();
    const ch = guild.channels.find((c) => c.name.toLowerCase() === name);
    if (!ch) problems.push(`in:#${f.in} (no such channel)`);
    else p.set('channelId', String(ch.id));
  }
  if (f.has) p.set('has', f.has);
  if (f.pinned !== undefined) p.set('pinned', String(f.pinned));
  const b = dateBounds(f);
  if (b.before !== undefined) p.set('before', String(b.before));
  if (b.after !== undefined) p.set('after', String(b.after));
  return { params: p, problems };
}

/** The filters, offered under the empty box while it has the focus (a click types one). */
const FILTERS: Array<{ key: string; example: string; what: string }> = [
  { key: 'from:', example: 'from:name', what: "a member's messages" },
  { key: 'in:#', example: 'in:#channel', what: 'in one channel' },
  {
    key: 'has:',
    example: 'has:image',
    what: `with a ${HAS_VALUES.join(', ')}`,
  },
  { key: 'before:', example: 'before:2026-01-31', what: 'sent before a day' },
  { key: 'after:', example: 'after:2026-01-01', what: 'sent after a day' },
  { key: 'pinned:true', example: 'pinned:true', what: 'pinned messages' },
];

export function SearchBox({ guild }: { guild: Guild }) {
  const [text, setText] = useState('');
  const [focused, setFocused] = useState(false);
  const phone = useMedia(PHONE);
  const [view, setView] = useState<View>({ kind: 'closed' });
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => setView({ kind: 'closed' }), [guild.id]);

  const run = async (query: string, offset = 0) => {
    const f = parseSearch(query);
    if (!members.value.get(guild.id)) await loadMembers(guild.id).catch(() => {});
    const names = new Map(
      (members.value.get(guild.id) ?? []).map((m) => [m.user.name.toLowerCase(), m.user.id]),
    );
    const { params, problems } = searchParams(f, guild, names);
    if (problems.length > 0) {
      setView({ kind: 'error', query, message: `Could not read: ${problems.join('; ')}` });
      return;
    }
    params.set('limit', String(PAGE));
    if (offset > 0) params.set('offset', String(offset));
    setBusy(true);
    try {
      const result = await get<SearchResult>(
        `/api/v1/guilds/${guild.id}/messages/search?${params.toString()}`,
      );
      setView({ kind: 'results', query, terms: highlightTerms(f.q), result, offset });
    } catch (x) {
      setView({ kind: 'error', query, message: describe(x) });
    } finally {
      setBusy(false);
    }
  };

  const hints = focused && text === '' && view.kind === 'closed';
  return (
    <div class="search" role="search">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (text.trim()) void run(text);
        }}
      >
        <input
          ref={input}
          type="search"
          class="search-input"
          aria-label="Search messages"
          // the filters are listed under the box when it is focused (FILTERS)
          placeholder={phone ? 'Search' : 'Search messages'}
          aria-describedby={hints ? 'search-hints' : undefined}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          onFocus={() => setFocused(true)}
          onBlur={() => setFocused(false)}
          onKeyDown={(e) => {
            if (e.key === 'Escape') setView({ kind: 'closed' });
          }}
        />
      </form>
      {hints && (
        <div class="search-hints" id="search-hints">
          <p class="muted small">Words, "a phrase", -leave-out, and filters:</p>
          <ul>
            {FILTERS.map((f) => (
              <li key={f.key}>
                <button
                  type="button"
                  class="search-hint"
                  // the box keeps the focus: the filter is typed into it
                  onMouseDown={(e) => e.preventDefault()}
                  onClick={() => {
                    setText(f.key);
                    input.current?.focus();
                  }}
                >
                  <code>{f.example}</code>
                  <span class="muted small">{f.what}</span>
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      {view.kind !== 'closed' && (
        <section class="search-panel" aria-label="Search results">
          <header class="search-panel-head">
            {view.kind === 'context' ? (
              <button type="button" class="btn small" onClick={() => setView(view.back)}>
                ← Results
              </button>
            ) : (
              <span class="muted small" aria-live="polite">
                {busy
                  ? 'Searching…'
                  : view.kind === 'results'
                    ? resultCount(view.result)
                    : 'Search failed'}
              </span>
            )}
            <button
              type="button"
              class="icon-btn"
              aria-label="Close search"
              onClick={() => setView({ kind: 'closed' })}
            >
              <Icon name="x" size={18} />
            </button>
          </header>
          {view.kind === 'error' && <p class="search-error">{view.message}</p>}
          {view.kind === 'results' && (
            <Results
              guild={guild}
              view={view}
              open={(m) => setView({ kind: 'context', back: view, message: m, terms: view.terms })}
              page={(offset) => void run(view.query, offset)}
            />
          )}
          {view.kind === 'context' && (
            <Context guild={guild} message={view.message} terms={view.terms} />
          )}
        </section>
      )}
    </div>
  );
}

const resultCount = (r: SearchResult): string =>
  r.total === 0
    ? 'No results'
    : `${r.totalCapped ? 'More than 1,000' : r.total.toLocaleString()} result${r.total === 1 ? '' : 's'}`;

function Marked({ text, terms }: { text: string; terms: readonly string[] }) {
  return (
    <>{highlight(text, terms).map((s, i) => (s.hit ? <mark key={i}>{s.text}</mark> : s.text))}</>
  );
}

function Results(props: {
  guild: Guild;
  view: Extract<View, { kind: 'results' }>;
  open: (m: Message) => void;
  page: (offset: number) => void;
}) {
  const { result, terms, offset } = props.view;
  // Grouped by channel, in the order of each channel's newest hit.
  const groups = new Map<number, Message[]>();
  for (const m of result.messages) {
    const list = groups.get(m.channelId) ?? [];
    list.push(m);
    groups.set(m.channelId, list);
  }
  const channelName = (id: number) =>
    props.guild.channels.find((c) => c.id === id)?.name ?? 'unknown';
  return (
    <div class="search-results">
      {[...groups].map(([channelId, list]) => (
        <section key={channelId} class="search-group" aria-label={`#${channelName(channelId)}`}>
          <h3 class="section-title"># {channelName(channelId)}</h3>
          <ul>
            {list.map((m) => (
              <li key={m.id}>
                <button
                  type="button"
                  class="search-hit"
                  data-id={m.id}
                  onClick={() => props.open(m)}
                >
                  <span class="search-hit-head">
                    <span class="author">{m.author.name}</span>
                    <time class="muted small" dateTime={m.timestamp}>
                      {when(m.timestamp)}
                    </time>
                  </span>
                  <span class="search-hit-text">
                    <Marked
                      text={m.content.length > 400 ? `${m.content.slice(0, 400)}…` : m.content}
                      terms={terms}
                    />
                    {m.content === '' && (
                      <span class="muted">
                        {m.attachments?.map((a) => a.filename).join(', ') ?? 'Embed'}
                      </span>
                    )}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        </section>
      ))}
      {(offset > 0 || result.hasMore) && (
        <nav class="search-pager" aria-label="Result pages">
          <button
            type="button"
            class="btn small"
            disabled={offset === 0}
            onClick={() => props.page(Math.max(0, offset - PAGE))}
          >
            Newer
          </button>
          <span class="muted small">
            {offset + 1}–{offset + result.messages.length}
          </span>
          <button
            type="button"
            class="btn small"
            disabled={!result.hasMore}
            onClick={() => props.page(offset + PAGE)}
          >
            Older
          </button>
        </nav>
      )}
    </div>
  );
}

/**
 * The message in its context: the page around it, then older and newer pages on request; the
 * message itself marked and scrolled to.
 */
function Context(props: { guild: Guild; message: Message; terms: string[] }) {
  const { message } = props;
  const base = `/api/v1/channels/${message.channelId}/messages`;
  const [items, setItems] = useState<Message[]>([]);
  const [older, setOlder] = useState(false);
  const [newer, setNewer] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const list = useRef<HTMLOListElement>(null);
  const scrolled = useRef(false);

  useEffect(() => {
    let live = true;
    scrolled.current = false;
    setLoading(true);
    // D16: `before` is exclusive, so id+1 includes the message itself.
    void Promise.all([
      get<MessageList>(`${base}?before=${message.id + 1}&limit=25`),
      get<MessageList>(`${base}?after=${message.id}&limit=25`),
    ])
      .then(([a, b]) => {
        if (!live) return;
        setItems([...a.messages].reverse().concat([...b.messages].reverse()));
        setOlder(a.hasMore);
        setNewer(b.hasMore);
      })
      .catch((x) => live && setError(describe(x)))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [message.id]);

  const keepFromBottom = useRef<number | null>(null);
  useLayoutEffect(() => {
    const scroller = list.current?.closest('.search-context');
    if (keepFromBottom.current !== null && scroller) {
      scroller.scrollTop = scroller.scrollHeight - keepFromBottom.current;
      keepFromBottom.current = null;
    }
    if (scrolled.current || items.length === 0) return;
    list.current?.querySelector(`[data-id="${message.id}"]`)?.scrollIntoView({ block: 'center' });
    scrolled.current = true;
  }, [items]);

  const more = async (dir: 'older' | 'newer') => {
    const edge = dir === 'older' ? items[0] : items[items.length - 1];
    if (!edge) return;
    setLoading(true);
    try {
      const page = await get<MessageList>(
        `${base}?${dir === 'older' ? 'before' : 'after'}=${edge.id}&limit=25`,
      );
      const got = [...page.messages].reverse();
      if (dir === 'older') {
        // keep what the reader looks at in place while older messages come in above it
        const scroller = list.current?.closest('.search-context');
        const fromBottom = scroller ? scroller.scrollHeight - scroller.scrollTop : 0;
        keepFromBottom.current = scroller ? fromBottom : null;
        setItems((x) => got.concat(x));
        setOlder(page.hasMore);
      } else {
        setItems((x) => x.concat(got));
        setNewer(page.hasMore);
      }
    } catch (x) {
      setError(describe(x));
    } finally {
      setLoading(false);
    }
  };

  const channel = props.guild.channels.find((c) => c.id === message.channelId);
  return (
    <div class="search-context">
      <div class="search-context-head">
        <strong># {channel?.name ?? 'unknown'}</strong>
        <button
          type="button"
          class="btn small"
          onClick={() => navigate(`/g/${props.guild.id}/${message.channelId}`)}
        >
          Open channel
        </button>
      </div>
      {error && <p class="search-error">{error}</p>}
      {older && (
        <button
          type="button"
          class="btn small search-more"
          disabled={loading}
          onClick={() => void more('older')}
        >
          Load older
        </button>
      )}
      {loading && items.length === 0 ? (
        <Spinner />
      ) : (
        <ol class="search-context-list" ref={list} aria-label="Messages around the result">
          {items.map((m) => (
            <li
              key={m.id}
              data-id={m.id}
              class={`search-context-msg${m.id === message.id ? ' target' : ''}`}
              aria-current={m.id === message.id ? 'true' : undefined}
            >
              <Avatar name={m.author.name} id={m.author.id} size={28} />
              <div>
                <span class="search-hit-head">
                  <span class="author">{m.author.name}</span>
                  <time class="muted small" dateTime={m.timestamp}>
                    {when(m.timestamp)}
                  </time>
                </span>
                <div class="text">
                  {m.id === message.id ? (
                    <Marked text={m.content} terms={props.terms} />
                  ) : (
                    renderMarkdown(m.content, NO_NAMES)
                  )}
                </div>
              </div>
            </li>
          ))}
        </ol>
      )}
      {newer && (
        <button
          type="button"
          class="btn small search-more"
          disabled={loading}
          onClick={() => void more('newer')}
        >
          Load newer
        </button>
      )}
    </div>
  );
}
