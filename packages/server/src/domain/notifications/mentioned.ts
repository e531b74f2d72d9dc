import type { Db } from '../../storage/db.js';
import type { Domain } from '../context.js';
import { viewGroups } from '../guilds/audience.js';
import { viewersAmong } from '../permissions/access.service.js';

/**
 * D66: what a message says about whom it addresses — the resolved mentions of D61/D62 (so
 * `allowedMentions` and D57's MENTION_EVERYONE have already been applied by the send or edit)
 * and, for a DM, its two parties.
 */
export interface AddressedMessage {
  id: number;
  channelId: number;
  guildId: number | null;
  authorId: number;
  mentions: readonly number[];
  mentionRoles: readonly number[];
  mentionEveryone: boolean;
  /** a DM's two parties */
  dmUserIds?: readonly number[] | undefined;
  /** which of `mentions` are people, when the caller has read it (saves a read when none is) */
  mentionedPeople?: readonly number[] | undefined;
}

export type AddressReason = 'dm' | 'mention';

/**
 * D66: the people a message addresses, with why: in a DM the other party ('dm', every message);
 * in a guild channel each person it mentions directly, through a role of theirs or with
 * @everyone/@here ('mention') — only people (never bots), never the author, and only those who
 * can VIEW the channel (D12: a mention in a channel someone cannot see reaches nobody).
 * Reads only; a message that mentions nobody costs no query.
 */
/** A guild message that mentions nobody addresses nobody: known without a read (issue 29). */
export const addressesNobody = (m: AddressedMessage): boolean =>
  m.guildId !== null &&
  !m.mentionEveryone &&
  m.mentions.length === 0 &&
  m.mentionRoles.length === 0;

export async function addressedPeople(
  db: Db,
  m: AddressedMessage,
  /** with it, people named one by one are checked through the access check's cache */
  d?: Domain,
): Promise<Map<number, AddressReason>> {
  const out = new Map<number, AddressReason>();
  if (m.guildId === null) {
    const others = (m.dmUserIds ?? []).filter((u) => u !== m.authorId);
    if (others.length === 0) return out;
    const people = await db
      .selectFrom('users')
      .select('id')
      .where('id', 'in', others)
      .where('is_bot', '=', 0)
      .execute();
    for (const p of people) out.set(Number(p.id), 'dm');
    return out;
  }
  if (!m.mentionEveryone && m.mentions.length === 0 && m.mentionRoles.length === 0) return out;
  let only: number[] | undefined;
  if (!m.mentionEveryone) {
    const set = new Set(m.mentionedPeople ?? m.mentions);
    if (m.mentionRoles.length > 0) {
      const rows = await db
        .selectFrom('member_roles')
        .select('user_id')
        .where('guild_id', '=', m.guildId)
        .where('role_id', 'in', [...m.mentionRoles])
        .execute();
      for (const r of rows) set.add(Number(r.user_id));
    }
    set.delete(m.authorId);
    if (set.size === 0) return out;
    only = [...set];
    // People the send resolved one by one (no role, so no bot among them): each one's standing
    // from the cache the access check keeps — no read while nothing changed (issue 24: a mention
    // of a person made the send build that person's whole view of the guild, ten reads).
    if (d && m.mentionRoles.length === 0 && m.mentionedPeople !== undefined) {
      for (const id of await viewersAmong(d, m.channelId, only, db)) out.set(id, 'mention');
      return out;
    }
  }
  for (const id of await viewersOf(db, m.guildId, m.channelId, only))
    if (id !== m.authorId) out.set(id, 'mention');
  return out;
}

/** The people among the guild's members (or among `only`) who can VIEW the channel. */
export async function viewersOf(
  db: Db,
  guildId: number,
  channelId: number,
  only?: readonly number[],
): Promise<number[]> {
  const ids: number[] = [];
  for (const g of await viewGroups(db, guildId, only))
    if (g.view.channels.some((c) => c.id === channelId)) ids.push(...g.userIds);
  return ids.sort((a, b) => a - b);
}
