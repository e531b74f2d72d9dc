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
  content: string;
  created_at: number;
  edited_at: number | null;
  /** D65: a bot's components (JSON) */
  components?: string | null;
  /** D61: the interaction a reply answers (JSON) */
  interaction?: string | null;
}

export function messageView(r: MessageRow): Message {
  const m: Message = {
    id: r.id,
    channelId: r.channel_id,
    content: r.content,
    author: { id: r.author_id, name: r.author_name },
    timestamp: iso(r.created_at),
  };
  // D17: guild messages carry guildId, DM messages never do.
  if (r.guild_id !== null) m.guildId = r.guild_id;
  // D18: editedTimestamp only on a message that has been edited.
  if (r.edited_at !== null) m.editedTimestamp = iso(r.edited_at);
  // D56/D61/D65: present only when they carry something.
  if (r.components) m.components = JSON.parse(r.components) as NonNullable<Message['components']>;
  if (r.interaction)
    m.interaction = JSON.parse(r.interaction) as NonNullable<Message['interaction']>;
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

export const memberUserView = (
  urls: Urls,
  u: { id: number; name: string; avatar: string | null },
): MemberUser => ({ id: u.id, name: u.name, avatar: avatarUrl(urls, u.avatar) });

export const memberView = (
  urls: Urls,
  u: { id: number; name: string; avatar: string | null },
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
