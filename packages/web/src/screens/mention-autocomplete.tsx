import { useState } from 'preact/hooks';
import { plainText } from '../lib/markdown.js';
import type { Guild, MemberSummary, Message } from '../lib/types.js';
import { Avatar } from '../ui/kit.js';
import type { MentionNames } from '../ui/markdown.js';

/**
 * D61/D62 mention autocomplete: `@` offers people, roles that may be mentioned and — with
 * MENTION_EVERYONE — `@everyone`/`@here`; `#` offers channels. Arrow keys move, Enter or Tab
 * picks, Escape closes; a pick replaces the typed query with the mention's syntax
 * (`<@id>`, `<@&id>`, `<#id>`, `@everyone`) and a space.
 */
export interface MentionSource {
  /** `avatar`: shown beside the name in the list, as the message list shows it */
  people: readonly { id: number; name: string; isBot?: boolean; avatar?: string }[];
  /** roles the author may mention (D58 mentionable, or all with MENTION_EVERYONE) */
  roles: readonly { id: number; name: string }[];
  channels: readonly { id: number; name: string }[];
  /** D57 MENTION_EVERYONE: @everyone and @here are offered */
  everyone: boolean;
}

export interface Candidate {
  key: string;
  label: string;
  hint: string;
  insert: string;
  /** what stands before the label: a person's avatar, or the sigil of a role, channel or @everyone */
  icon:
    { person: { id: number; name: string; avatar?: string | undefined } } | { sigil: '@' | '#' };
}

const MAX = 8;

/** The query being typed before the caret: `@ali` or `#gen` (after a space or at the start). */
export function queryAt(
  text: string,
  caret: number,
): { sigil: '@' | '#'; q: string; from: number } | null {
  const m = /(^|\s)([@#])([^\s@#<>]{0,32})$/u.exec(text.slice(0, caret));
  if (!m) return null;
  return { sigil: m[2] as '@' | '#', q: m[3]!.toLowerCase(), from: caret - m[3]!.length - 1 };
}

export function candidates(src: MentionSource, sigil: '@' | '#', q: string): Candidate[] {
  const hit = (name: string) => name.toLowerCase().includes(q);
  const rank = (a: { name: string }, b: { name: string }) =>
    Number(!a.name.toLowerCase().startsWith(q)) - Number(!b.name.toLowerCase().startsWith(q)) ||
    a.name.localeCompare(b.name);
  if (sigil === '#')
    return src.channels
      .filter((c) => hit(c.name))
      .sort(rank)
      .slice(0, MAX)
      .map((c) => ({
        key: `c${c.id}`,
        label: `#${c.name}`,
        hint: 'channel',
        insert: `<#${c.id}>`,
        icon: { sigil: '#' as const },
      }));
  const out: Candidate[] = src.people
    .filter((p) => hit(p.name))
    .sort(rank)
    .map((p) => ({
      key: `u${p.id}`,
      label: `@${p.name}`,
      hint: p.isBot ? 'bot' : 'person',
      insert: `<@${p.id}>`,
      icon: { person: { id: p.id, name: p.name, avatar: p.avatar } },
    }));
  for (const r of [...src.roles].filter((r) => hit(r.name)).sort(rank))
    out.push({
      key: `r${r.id}`,
      label: `@${r.name}`,
      hint: 'role',
      insert: `<@&${r.id}>`,
      icon: { sigil: '@' },
    });
  if (src.everyone)
    for (const e of ['everyone', 'here'])
      if (e.startsWith(q))
        out.push({
          key: e,
          label: `@${e}`,
          hint: e === 'here' ? 'everyone online' : 'everyone here',
          insert: `@${e}`,
          icon: { sigil: '@' },
        });
  return out.slice(0, MAX);
}

/**
 * The autocomplete's state for one textarea: call `onInput` after each change, `onKeyDown`
 * first in the textarea's key handler (true: the key was the list's), and render `list`.
 */
export function useMentionAutocomplete(
  source: MentionSource | undefined,
  get: () => HTMLTextAreaElement | null,
  setText: (t: string) => void,
) {
  const [open, setOpen] = useState<{ sigil: '@' | '#'; q: string; from: number } | null>(null);
  const [active, setActive] = useState(0);
  const list = open && source ? candidates(source, open.sigil, open.q) : [];

  const refresh = () => {
    const el = get();
    if (!el || !source) return setOpen(null);
    const q = queryAt(el.value, el.selectionStart ?? el.value.length);
    setOpen(q);
    setActive(0);
  };

  const pick = (c: Candidate) => {
    const el = get();
    if (!el || !open) return;
    const caret = el.selectionStart ?? el.value.length;
    const before = el.value.slice(0, open.from);
    const after = el.value.slice(caret);
    const text = `${before}${c.insert} ${after.replace(/^ /, '')}`;
    setText(text);
    setOpen(null);
    const at = before.length + c.insert.length + 1;
    queueMicrotask(() => {
      el.focus();
      el.setSelectionRange(at, at);
    });
  };

  const onKeyDown = (e: KeyboardEvent): boolean => {
    if (list.length === 0) return false;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const d = e.key === 'ArrowDown' ? 1 : -1;
      setActive((a) => (a + d + list.length) % list.length);
      return true;
    }
    if ((e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey) {
      e.preventDefault();
      pick(list[Math.min(active, list.length - 1)]!);
      return true;
    }
    if (e.key === 'Escape') {
      e.preventDefault();
      setOpen(null);
      return true;
    }
    return false;
  };

  const view =
    list.length === 0 ? null : (
      <ul class="mention-list" role="listbox" aria-label="Mention suggestions" id="mention-list">
        {list.map((c, i) => (
          <li
            key={c.key}
            role="option"
            id={`mention-${c.key}`}
            aria-selected={i === active}
            class={i === active ? 'active' : undefined}
            onMouseDown={(e) => {
              e.preventDefault(); // keep the textarea's focus and caret
              pick(c);
            }}
            onMouseEnter={() => setActive(i)}
          >
            <span class="mention-who">
              {'person' in c.icon ? (
                <Avatar
                  name={c.icon.person.name}
                  id={c.icon.person.id}
                  url={c.icon.person.avatar}
                  size={20}
                />
              ) : (
                <span class="mention-sigil" aria-hidden="true">
                  {c.icon.sigil}
                </span>
              )}
              <span class="mention-label">{c.label}</span>
            </span>
            <span class="muted small">{c.hint}</span>
          </li>
        ))}
      </ul>
    );

  return {
    refresh,
    onKeyDown,
    view,
    /** for the textarea's aria-activedescendant / aria-expanded */
    expanded: list.length > 0,
    activeId:
      list.length > 0 ? `mention-${list[Math.min(active, list.length - 1)]!.key}` : undefined,
    close: () => setOpen(null),
  };
}

/** D57/D58: what a guild offers its member: everyone in it, roles they may mention, channels. */
export function guildMentionSource(
  guild: Guild,
  members: readonly MemberSummary[],
  canEveryone: boolean,
): MentionSource {
  const bots = new Set(guild.bots);
  return {
    people: members.map((m) => ({
      id: m.user.id,
      name: m.user.name,
      isBot: bots.has(m.user.id),
      avatar: m.user.avatar,
    })),
    roles: guild.roles.filter(
      (r) =>
        r.id !== guild.id && // @everyone is written as itself
        (canEveryone || (r as { mentionable?: boolean }).mentionable === true),
    ),
    channels: guild.channels,
    everyone: canEveryone,
  };
}

/**
 * A message's text for a one-line preview (the reply bar, the replied-to line): mentions as the
 * names they show (D62), lines joined, cut at `max` characters.
 */
export function previewText(
  m: Pick<Message, 'content' | 'attachments' | 'embeds'>,
  names: Pick<MentionNames, 'user' | 'role' | 'channel'>,
  max = 120,
): string {
  // the words as the message shows them, without its markup (`**today**` reads "today")
  const raw = m.content
    ? plainText(m.content) || m.content
    : m.attachments
      ? 'Attachment'
      : m.embeds
        ? 'Embed'
        : '';
  const text = raw
    .replace(/<@!?(\d{1,20})>/g, (_, id: string) => `@${names.user(Number(id)) ?? 'unknown-user'}`)
    .replace(
      /<@&(\d{1,20})>/g,
      (_, id: string) => `@${names.role(Number(id))?.name ?? 'deleted-role'}`,
    )
    .replace(/<#(\d{1,20})>/g, (_, id: string) => `#${names.channel(Number(id)) ?? 'unknown'}`)
    .replace(/\s*\n\s*/g, ' ');
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
