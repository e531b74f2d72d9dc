import { computed } from '@preact/signals';
import type { Guild } from '../lib/types.js';
import { dms, guilds, mentionCount, mentions } from '../state/store.js';
import './notify.css';

/**
 * D66: mention badges — the number of unread messages that address the person (mentions of
 * them, a role of theirs or everyone; in a DM every message), right on a fresh load (READY's
 * read states) and live. Unread without a mention stays the dot it was.
 */
export function MentionBadge({ count }: { count: number }) {
  if (count <= 0) return null;
  const label = `${count} unread ${count === 1 ? 'mention' : 'mentions'}`;
  return (
    <span class="mention-badge" role="img" aria-label={label} title={label}>
      {count > 99 ? '99+' : count}
    </span>
  );
}

/** A guild's mentions: the sum over its channels (those the person can see). */
export function guildMentions(g: Guild): number {
  let n = 0;
  for (const c of g.channels) n += mentionCount(c.id);
  return n;
}

/** Every DM's unread messages. */
export const dmMentions = computed(() => {
  const m = mentions.value;
  let n = 0;
  for (const d of dms.value) n += m.get(d.channelId) ?? 0;
  return n;
});

/** D66: the total for the tab title — channels of guilds the person is in, and DMs. */
export const totalMentions = computed(() => {
  let n = dmMentions.value;
  for (const g of guilds.value.values()) n += guildMentions(g);
  return n;
});

/** "(3) general · Parley" while 3 mentions wait, else "general · Parley". */
export const tabTitle = (title: string, count: number): string =>
  `${count > 0 ? `(${count > 99 ? '99+' : count}) ` : ''}${title} · Parley`;
