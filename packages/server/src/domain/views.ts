import type { Bot, Channel, ChannelSummary, Member, MemberUser, Message } from '@parley/protocol';
import { iso } from '../ids/clock.js';
import type { Urls } from './context.js';

/**
 * The one serializer of each wire shape (D17: a Message is the same wherever it appears — REST,
 * gateway, webhooks). Exact field sets: nothing extra, nothing missing.
 */
export const avatarUrl = (urls: Urls, avatar: string | null): string =>
  avatar ?? urls.defaultAvatar;

export interface MessageRow {
  id: number;
  channel_id: number;
  guild_id: number | null;
  author_id: number;
  author_name: string;
  /** D56: 1 when the author is a bot (absent or 0: a person) */
  author_is_bot?: number | boolean | undefined;
  content: string;
  created_at: number;
  edited_at: number | null;
}

export function messageView(r: MessageRow): Message {
  const m: Message = {
    id: r.id,
    channelId: r.channel_id,
    content: r.content,
    // D56: a bot author carries isBot: true; a person's author stays exactly {id, name}.
    author: r.author_is_bot
      ? { id: r.author_id, name: r.author_name, isBot: true }
      : { id: r.author_id, name: r.author_name },
    timestamp: iso(r.created_at),
  };
  // D17: guild messages carry guildId, DM messages never do.
  if (r.guild_id !== null) m.guildId = r.guild_id;
  // D18: editedTimestamp only on a message that has been edited.
  if (r.edited_at !== null) m.editedTimestamp = iso(r.edited_at);
  return m;
}

export interface ChannelRow {
  id: number;
  guild_id: number | null;
  type: number;
  name: string;
  topic: string;
}

export const channelSummaryView = (c: ChannelRow & { guild_id: number }): ChannelSummary => ({
  id: c.id,
  guildId: c.guild_id,
  name: c.name,
  type: c.type,
});

export const channelView = (c: ChannelRow & { guild_id: number }): Channel => ({
  ...channelSummaryView(c),
  topic: c.topic,
});

/** D56: a bot member's user carries isBot: true; a person's stays {id, name, avatar}. */
export const memberUserView = (
  urls: Urls,
  u: { id: number; name: string; avatar: string | null; is_bot?: number | boolean | undefined },
): MemberUser =>
  u.is_bot
    ? { id: u.id, name: u.name, avatar: avatarUrl(urls, u.avatar), isBot: true }
    : { id: u.id, name: u.name, avatar: avatarUrl(urls, u.avatar) };

export const memberView = (
  urls: Urls,
  u: { id: number; name: string; avatar: string | null; is_bot?: number | boolean | undefined },
  roles: number[],
  joinedAt: number,
): Member => ({ user: memberUserView(urls, u), roles, joinedAt: iso(joinedAt) });

export interface BotRow {
  id: number;
  description: string;
  user_id: number;
  name: string;
  avatar: string | null;
}

export const botView = (urls: Urls, b: BotRow): Bot => ({
  id: b.id,
  name: b.name,
  avatar: avatarUrl(urls, b.avatar),
  description: b.description,
  botUser: { id: b.user_id, name: b.name, isBot: true },
});
