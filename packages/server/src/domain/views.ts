import type {
  Bot,
  Channel,
  ChannelSummary,
  Member,
  MemberUser,
  Message,
  Reaction,
  ReferencedMessage,
} from '@parley/protocol';
import { iso } from '../ids/clock.js';
import type { Urls } from './context.js';
import { readExtra, type MessageExtra } from './messages/extra.js';

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
  /** D56: 1 (or true) when the author is a bot (absent, null or 0: a person) */
  author_is_bot?: number | boolean | null | undefined;
  /** D61: messages/extra.ts */
  extra?: string | null;
  /** D63 */
  pinned_at?: number | null;
}

/**
 * D17/D18, and D56/D61/D63: every field beyond D18's is present only when it carries
 * something. `reactions` depend on the reader (`me`): only reads pass them, never events.
 */
export function messageView(
  r: MessageRow,
  more: {
    reactions?: Reaction[];
    referenced?: ReferencedMessage | null;
    /** `r.extra` as the caller already holds it (a send: no parse of what it just wrote) */
    extra?: MessageExtra;
  } = {},
): Message {
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
  if (r.extra) {
    const x = more.extra ?? readExtra(r.extra);
    if (x.mentions) m.mentions = x.mentions;
    if (x.mentionRoles) m.mentionRoles = x.mentionRoles;
    if (x.mentionEveryone) m.mentionEveryone = true;
    if (x.attachments) m.attachments = x.attachments;
    if (x.embeds) m.embeds = x.embeds;
    if (x.components) m.components = x.components;
    if (x.interaction) m.interaction = x.interaction;
    if (x.reference) {
      m.reference = x.reference;
      if (more.referenced !== undefined) m.referencedMessage = more.referenced;
    }
  }
  if (more.reactions && more.reactions.length > 0) m.reactions = more.reactions;
  if (r.pinned_at !== null && r.pinned_at !== undefined) m.pinned = true;
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
  /** D63: JSON array of subscribed types, or null */
  events?: string | null;
}

export const botView = (urls: Urls, b: BotRow): Bot => {
  const bot: Bot = {
    id: b.id,
    name: b.name,
    avatar: avatarUrl(urls, b.avatar),
    description: b.description,
    botUser: { id: b.user_id, name: b.name, isBot: true },
  };
  // D63/D56: present only when the bot subscribed to something
  const events = parseBotEvents(b.events);
  if (events.length > 0) bot.events = events as NonNullable<Bot['events']>;
  return bot;
};

export function parseBotEvents(text: string | null | undefined): string[] {
  if (!text) return [];
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}
