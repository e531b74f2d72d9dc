import type {
  DmSummary,
  EventDataMap,
  Guild,
  MemberSummary,
  Message,
  PeopleEventDataMap,
  RichEventDataMap,
  ReadState,
  ReadyPerson,
  User,
} from '../lib/types.js';

/**
 * The web app's whole store as one immutable value, changed only by `reduce(state, event)`: the
 * gateway's dispatches (D51) and the app's own results (pages read, members listed, a logout)
 * are events alike. Pure — no clock, no network, no DOM — so it is tested without a browser
 * (test/unit/reduce.test.ts), and a logout is one reset point: `reduce(any, LOGOUT)` is `initial`.
 * Unchanged parts keep their identity, so the signals derived from them do not re-render.
 */

/** One channel's messages (guild or DM), oldest first, unique by id (D16 pages merged). */
export interface ChannelState {
  readonly items: readonly Message[];
  /** older messages exist before items[0] (D16 hasMore) */
  readonly hasOlder: boolean;
  /** its newest page has been read once (later ones arrive by the gateway) */
  readonly loaded: boolean;
}

export interface State {
  readonly me: User | null;
  /** the first READY has arrived (guilds and read states are known) */
  readonly synced: boolean;
  readonly guilds: ReadonlyMap<number, Guild>;
  readonly dms: readonly DmSummary[];
  /** channel → the last message read (D48) */
  readonly readStates: ReadonlyMap<number, number>;
  /** channel → the newest message id seen (unread marks) */
  readonly latest: ReadonlyMap<number, number>;
  /** D66: channel → unread messages that address me (mentions; in a DM every message) */
  readonly mentions: ReadonlyMap<number, number>;
  readonly presence: ReadonlyMap<number, 'online' | 'offline'>;
  /** channel → user → until (ms); D51: shown for 8 s */
  readonly typing: ReadonlyMap<number, ReadonlyMap<number, number>>;
  readonly members: ReadonlyMap<number, readonly MemberSummary[]>;
  readonly channels: ReadonlyMap<number, ChannelState>;
  /** a guild the person just lost (kicked, banned, deleted): the chat view says so */
  readonly lostGuild: string | null;
}

export const initial: State = Object.freeze({
  me: null,
  synced: false,
  guilds: new Map(),
  dms: [],
  readStates: new Map(),
  latest: new Map(),
  mentions: new Map(),
  presence: new Map(),
  typing: new Map(),
  members: new Map(),
  channels: new Map(),
  lostGuild: null,
});

/** How long a typing mark lasts (D51). */
export const TYPING_MS = 8000;

/** What the app itself learns (answers to its requests, the clock running out). */
export interface LocalEvents {
  /** a session exists (login, or the cookie was still valid) */
  SESSION: User;
  /** D47 logout or a lost session: back to `initial` */
  LOGOUT: null;
  /** D51 READY; `now` is not needed: READY carries no times */
  READY: ReadyPerson;
  /** settings changed the person's name or avatar */
  ME: User;
  DMS: readonly DmSummary[];
  MEMBERS: { guildId: number; members: readonly MemberSummary[] };
  /** a guild read again (GET /app/v1/guilds/:id) */
  GUILD: Guild;
  /**
   * Messages read by REST (D16) or sent by this app: merged by id. `newest` replaces what the
   * channel held (its newest page, read afresh); `hasOlder` is set when the page says.
   */
  PAGE: { channelId: number; messages: readonly Message[]; hasOlder?: boolean; newest?: boolean };
  /** the read mark moved here (D48) */
  READ: { channelId: number; messageId: number };
  /** D66: the read states read again (GET /app/v1/users/@me/read-states) */
  READ_STATES: readonly ReadState[];
  /** typing marks older than `now` end */
  TYPING_EXPIRE: { channelId: number; now: number };
  /** the "you lost that guild" notice was shown */
  LOST_SEEN: null;
  /** D63: I pinned or unpinned a message (the event only says the channel's pins changed) */
  PINNED: { channelId: number; messageId: number; pinned: boolean };
}

export type GatewayEvents = EventDataMap & PeopleEventDataMap & RichEventDataMap;
type AllEvents = LocalEvents & GatewayEvents;

/** An event: `now` (ms) is given for the few that need a time (TYPING_START). */
export type StoreEvent = {
  [K in keyof AllEvents]: { type: K; d: AllEvents[K]; now?: number };
}[keyof AllEvents];

const put = <K, V>(m: ReadonlyMap<K, V>, k: K, v: V | undefined): ReadonlyMap<K, V> => {
  if (v === undefined ? !m.has(k) : m.get(k) === v) return m;
  const n = new Map(m);
  if (v === undefined) n.delete(k);
  else n.set(k, v);
  return n;
};

const EMPTY_CHANNEL: ChannelState = { items: [], hasOlder: true, loaded: false };

/** Adds messages (any order) to a list sorted by id, replacing those with the same id. */
export function mergeMessages(
  items: readonly Message[],
  add: readonly Message[],
): readonly Message[] {
  if (add.length === 0) return items;
  const last = items[items.length - 1];
  // The usual case, one new message after the newest: no re-sort.
  if (add.length === 1 && (!last || add[0]!.id > last.id)) return [...items, add[0]!];
  const byId = new Map(items.map((m) => [m.id, m]));
  for (const m of add) byId.set(m.id, m);
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

function noteLatest(s: State, channelId: number, id: number): State {
  return (s.latest.get(channelId) ?? 0) >= id ? s : { ...s, latest: put(s.latest, channelId, id) };
}

function read(s: State, channelId: number, messageId: number): State {
  if ((s.readStates.get(channelId) ?? 0) >= messageId) return s;
  const n = { ...s, readStates: put(s.readStates, channelId, messageId) };
  // D66: read up to the newest message: nothing there addresses me any more. (Read part of the
  // way, the server's MESSAGE_ACK says what is left.)
  return messageId >= (s.latest.get(channelId) ?? 0) ? setMentions(n, channelId, 0) : n;
}

function setMentions(s: State, channelId: number, n: number): State {
  const m = put(s.mentions, channelId, n > 0 ? n : undefined);
  return m === s.mentions ? s : { ...s, mentions: m };
}

/**
 * D66: the server's read state (MESSAGE_ACK, a read-states refetch) is the truth, unless this
 * app has already read further (its own mark is on its way; that ack follows).
 */
function serverRead(s: State, r: ReadState): State {
  const mine = s.readStates.get(r.channelId) ?? 0;
  if (mine > r.lastReadId) return s;
  const n =
    r.lastReadId > mine ? { ...s, readStates: put(s.readStates, r.channelId, r.lastReadId) } : s;
  return setMentions(n, r.channelId, r.mentionCount);
}

/**
 * D66: does this message address me — a DM from the other person, or a mention of me or of
 * everyone (the server resolved them, D61/D62)? Role mentions are not known here (the store
 * reads the read states again for those).
 */
export function addressesMe(s: State, m: Message): boolean {
  const me = s.me?.id;
  if (me === undefined || m.author.id === me) return false;
  if (m.guildId === undefined) return true;
  return m.mentionEveryone === true || (m.mentions ?? []).includes(me);
}

/** D66: an unread message stopped (−1) or started (+1) addressing me. */
function bumpMentions(s: State, m: Message, by: number): State {
  if ((s.readStates.get(m.channelId) ?? 0) >= m.id) return s;
  return setMentions(s, m.channelId, (s.mentions.get(m.channelId) ?? 0) + by);
}

function patchGuild(s: State, id: number, f: (g: Guild) => Guild): State {
  const g = s.guilds.get(id);
  return g ? { ...s, guilds: put(s.guilds, id, f(g)) } : s;
}

function patchChannel(s: State, channelId: number, f: (c: ChannelState) => ChannelState): State {
  const c = s.channels.get(channelId);
  if (!c) return s; // a channel nobody opened: its first page will hold the message
  const n = f(c);
  return n === c ? s : { ...s, channels: put(s.channels, channelId, n) };
}

function forgetChannels(s: State, ids: readonly number[]): State {
  let channels = s.channels;
  let typing = s.typing;
  let mentions = s.mentions;
  for (const id of ids) {
    channels = put(channels, id, undefined);
    typing = put(typing, id, undefined);
    mentions = put(mentions, id, undefined);
  }
  return channels === s.channels && typing === s.typing && mentions === s.mentions
    ? s
    : { ...s, channels, typing, mentions };
}

/** The message as this store holds it (only when its channel was opened). */
const known = (s: State, channelId: number, id: number): Message | undefined =>
  s.channels.get(channelId)?.items.find((x) => x.id === id);

function patchMessage(s: State, channelId: number, id: number, f: (m: Message) => Message): State {
  return patchChannel(s, channelId, (c) => {
    const i = c.items.findIndex((x) => x.id === id);
    if (i < 0) return c;
    const m = f(c.items[i]!);
    return m === c.items[i] ? c : { ...c, items: c.items.map((x, j) => (j === i ? m : x)) };
  });
}

function updateMessage(s: State, m: Message): State {
  return patchChannel(s, m.channelId, (c) =>
    c.items.some((x) => x.id === m.id)
      ? { ...c, items: c.items.map((x) => (x.id === m.id ? { ...x, ...m } : x)) }
      : c,
  );
}

export function reduce(s: State, e: StoreEvent): State {
  switch (e.type) {
    case 'SESSION':
      return s.me?.id === e.d.id ? { ...s, me: e.d } : { ...initial, me: e.d };
    case 'LOGOUT':
      return initial;
    case 'ME':
      return { ...s, me: e.d };
    case 'READY': {
      // A guild missing from a later READY was lost while we were away (kicked, banned,
      // deleted): no GUILD_DELETE reached us, so it is said the same way.
      const keep = new Set(e.d.guilds.map((g) => g.id));
      const gone = [...s.guilds.values()].filter((g) => !keep.has(g.id));
      let n: State = {
        ...s,
        me: e.d.user,
        synced: true,
        guilds: new Map(e.d.guilds.map((g) => [g.id, g])),
        readStates: new Map(e.d.readStates.map((r) => [r.channelId, r.lastReadId])),
        // D66: exact on every READY: mention counts, who is online (the others are not), DMs
        mentions: new Map(
          e.d.readStates
            .filter((r) => r.mentionCount > 0)
            .map((r) => [r.channelId, r.mentionCount]),
        ),
        presence: new Map(e.d.presences.map((p) => [p.userId, p.status])),
        dms: e.d.dms,
        lostGuild: s.synced && gone[0] ? gone[0].name : s.lostGuild,
      };
      // D66: each channel's and DM's newest message: unread marks right on a fresh load
      for (const g of e.d.guilds)
        for (const c of g.channels) if (c.lastMessageId) n = noteLatest(n, c.id, c.lastMessageId);
      for (const d of e.d.dms) if (d.lastMessageId) n = noteLatest(n, d.channelId, d.lastMessageId);
      for (const g of gone) {
        n = forgetChannels(
          n,
          g.channels.map((c) => c.id),
        );
        n = { ...n, members: put(n.members, g.id, undefined) };
      }
      return n;
    }
    case 'DMS': {
      let n: State = { ...s, dms: e.d };
      for (const d of e.d) if (d.lastMessageId) n = noteLatest(n, d.channelId, d.lastMessageId);
      return n;
    }
    case 'MEMBERS':
      return { ...s, members: put(s.members, e.d.guildId, e.d.members) };
    case 'GUILD':
      return { ...s, guilds: put(s.guilds, e.d.id, e.d) };
    case 'PAGE': {
      const { channelId, messages } = e.d;
      const old = s.channels.get(channelId) ?? EMPTY_CHANNEL;
      const c: ChannelState = {
        items: mergeMessages(e.d.newest ? [] : old.items, messages),
        hasOlder: e.d.hasOlder ?? old.hasOlder,
        loaded: old.loaded || e.d.newest === true,
      };
      const newest = c.items[c.items.length - 1];
      const n: State = { ...s, channels: put(s.channels, channelId, c) };
      return newest ? noteLatest(n, channelId, newest.id) : n;
    }
    case 'READ':
      return read(s, e.d.channelId, e.d.messageId);
    case 'READ_STATES': {
      let n = s;
      for (const r of e.d) n = serverRead(n, r);
      return n;
    }
    case 'MESSAGE_ACK':
      return serverRead(s, e.d);
    case 'TYPING_EXPIRE': {
      const t = s.typing.get(e.d.channelId);
      if (!t) return s;
      const left = new Map([...t].filter(([, until]) => until > e.d.now));
      if (left.size === t.size) return s;
      return { ...s, typing: put(s.typing, e.d.channelId, left.size ? left : undefined) };
    }
    case 'PINNED': {
      const { channelId, messageId, pinned } = e.d;
      return patchMessage(s, channelId, messageId, (m) => {
        const { pinned: _, ...rest } = m;
        return pinned ? { ...rest, pinned: true } : rest; // D56: present only when true
      });
    }
    case 'MESSAGE_REACTION_ADD':
    case 'MESSAGE_REACTION_REMOVE': {
      const { channelId, messageId, emoji, userId } = e.d;
      const mine = userId === s.me?.id;
      const add = e.type === 'MESSAGE_REACTION_ADD';
      return patchMessage(s, channelId, messageId, (m) => {
        const list = m.reactions ?? [];
        const old = list.find((r) => r.emoji === emoji);
        // my own reaction arrives once per change; a repeat (a resume) changes nothing
        if (old && mine && old.me === add) return m;
        if (!old && !add) return m;
        const next = old
          ? list
              .map((r) =>
                r.emoji === emoji
                  ? { ...r, count: r.count + (add ? 1 : -1), me: mine ? add : r.me }
                  : r,
              )
              .filter((r) => r.count > 0)
          : [...list, { emoji, count: 1, me: mine }];
        const { reactions: _, ...rest } = m;
        return next.length ? { ...rest, reactions: next } : rest; // D56: absent when none
      });
    }
    case 'LOST_SEEN':
      return s.lostGuild === null ? s : { ...s, lostGuild: null };

    case 'MESSAGE_CREATE':
    case 'DM_MESSAGE_CREATE': {
      const m = e.d;
      let n = patchChannel(s, m.channelId, (c) => ({ ...c, items: mergeMessages(c.items, [m]) }));
      const fresh = (s.latest.get(m.channelId) ?? 0) < m.id; // not a replay
      n = noteLatest(n, m.channelId, m.id);
      // D66: one more unread message addressing me
      if (fresh && addressesMe(n, m)) n = bumpMentions(n, m, 1);
      // What I sent (here or on another device) is read.
      if (m.author.id === s.me?.id) n = read(n, m.channelId, m.id);
      const tm = n.typing.get(m.channelId);
      if (tm?.has(m.author.id)) {
        const t = new Map(tm);
        t.delete(m.author.id);
        n = { ...n, typing: put(n.typing, m.channelId, t.size ? t : undefined) };
      }
      if (e.type === 'DM_MESSAGE_CREATE') {
        const i = n.dms.findIndex((x) => x.channelId === m.channelId);
        if (i >= 0) {
          const item = { ...n.dms[i]!, lastMessageId: m.id };
          n = { ...n, dms: [item, ...n.dms.filter((_, j) => j !== i)] };
        }
      }
      return n;
    }
    case 'MESSAGE_UPDATE':
    case 'DM_MESSAGE_UPDATE': {
      // D66: an edit that adds or removes a mention of me, while unread
      const old = known(s, e.d.channelId, e.d.id);
      let n = updateMessage(s, e.d);
      if (old) {
        // the update is the whole message (D35): its mentions are the new ones
        const was = addressesMe(s, old);
        const is = addressesMe(s, e.d);
        if (was !== is) n = bumpMentions(n, old, is ? 1 : -1);
      }
      return n;
    }
    case 'MESSAGE_DELETE':
    case 'DM_MESSAGE_DELETE': {
      const { id, channelId } = e.d;
      // D66: an unread message that addressed me is gone
      const old = known(s, channelId, id);
      const n = old && addressesMe(s, old) ? bumpMentions(s, old, -1) : s;
      return patchChannel(n, channelId, (c) =>
        c.items.some((x) => x.id === id) ? { ...c, items: c.items.filter((x) => x.id !== id) } : c,
      );
    }
    case 'GUILD_CREATE':
      return { ...s, guilds: put(s.guilds, e.d.id, e.d), lostGuild: null };
    case 'GUILD_UPDATE':
      // D70: the guild's own fields only, never its channels.
      return patchGuild(s, e.d.id, (g) => ({ ...g, ...e.d }));
    case 'GUILD_DELETE': {
      const g = s.guilds.get(e.d.id);
      if (!g) return s;
      const n = forgetChannels(
        s,
        g.channels.map((c) => c.id),
      );
      return {
        ...n,
        lostGuild: g.name,
        guilds: put(n.guilds, g.id, undefined),
        members: put(n.members, g.id, undefined),
      };
    }
    case 'CHANNEL_CREATE':
    case 'CHANNEL_UPDATE': {
      const c = e.d;
      return patchGuild(s, c.guildId, (g) => ({
        ...g,
        channels: g.channels.some((x) => x.id === c.id)
          ? g.channels.map((x) => (x.id === c.id ? c : x))
          : [...g.channels, c],
      }));
    }
    case 'CHANNEL_DELETE': {
      const c = e.d;
      const n = forgetChannels(s, [c.id]);
      return patchGuild(n, c.guildId, (g) => ({
        ...g,
        channels: g.channels.filter((x) => x.id !== c.id),
      }));
    }
    case 'GUILD_ROLES_UPDATE':
      return patchGuild(s, e.d.guildId, (g) => ({ ...g, roles: e.d.roles }));
    case 'GUILD_MEMBER_ADD': {
      const m = e.d;
      const list = s.members.get(m.guildId);
      if (!list || list.some((x) => x.user.id === m.user.id)) return s;
      const next = [...list, { user: m.user, joinedAt: m.joinedAt, roles: m.roles }];
      next.sort((a, b) => a.user.id - b.user.id);
      return { ...s, members: put(s.members, m.guildId, next) };
    }
    case 'GUILD_MEMBER_REMOVE': {
      const m = e.d;
      const list = s.members.get(m.guildId);
      if (!list?.some((x) => x.user.id === m.user.id)) return s;
      return {
        ...s,
        members: put(
          s.members,
          m.guildId,
          list.filter((x) => x.user.id !== m.user.id),
        ),
      };
    }
    case 'GUILD_MEMBER_UPDATE': {
      // D58: the entry's roles and time-out (names' colours, the member menu); my own
      // permissions: the store reads the guild again (a request, not state).
      const m = e.d;
      const list = s.members.get(m.guildId);
      if (!list?.some((x) => x.user.id === m.user.id)) return s;
      const next = list.map((x) => {
        if (x.user.id !== m.user.id) return x;
        const { timeoutUntil: _old, ...rest } = x;
        return {
          ...rest,
          roles: m.roles,
          ...(m.timeoutUntil === undefined ? {} : { timeoutUntil: m.timeoutUntil }),
        };
      });
      return { ...s, members: put(s.members, m.guildId, next) };
    }
    case 'TYPING_START': {
      const d = e.d;
      if (d.userId === s.me?.id) return s;
      const now = e.now ?? Date.parse(d.at);
      const t = new Map(s.typing.get(d.channelId) ?? []);
      t.set(d.userId, now + TYPING_MS);
      return { ...s, typing: put(s.typing, d.channelId, t) };
    }
    case 'PRESENCE_UPDATE':
      return { ...s, presence: put(s.presence, e.d.userId, e.d.status) };
  }
  return s;
}
