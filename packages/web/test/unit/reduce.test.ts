import { describe, expect, it } from 'vitest';
import type { Guild, Message, ReadyPerson } from '../../src/lib/types.js';
import { initial, reduce, type State, type StoreEvent } from '../../src/state/reduce.js';

// The web app's store is a pure reduce(state, event) (issue #24): tested here without a browser.

const alice = { id: 1, name: 'alice', avatar: '', isBot: false };
const bob = { id: 2, name: 'bob', avatar: '', isBot: false };
const channel = (id: number, guildId: number, name = `c${id}`) => ({
  id,
  guildId,
  name,
  type: 0,
  topic: '',
});
const guild = (id: number, channels: number[], extra: Partial<Guild> = {}): Guild => ({
  id,
  name: `g${id}`,
  ownerId: alice.id,
  roles: [{ id, name: '@everyone', permissions: 3, color: null, position: 0, mentionable: false }],
  channels: channels.map((c) => channel(c, id)),
  bots: [],
  myPermissions: 8,
  ...extra,
});
const ready = (
  guilds: Guild[],
  readStates: Array<[number, number, number?]> = [],
  extra: Partial<ReadyPerson> = {},
): ReadyPerson => ({
  sessionId: 's',
  user: alice,
  guilds,
  // D66: read states carry mentionCount; READY adds presences and dms
  readStates: readStates.map(([channelId, lastReadId, mentionCount]) => ({
    channelId,
    lastReadId,
    mentionCount: mentionCount ?? 0,
  })),
  resumeWindowS: 120,
  presences: [],
  dms: [],
  ...extra,
});
const msg = (id: number, channelId: number, author = bob, content = `m${id}`): Message => ({
  id,
  channelId,
  guildId: 10,
  content,
  author: { id: author.id, name: author.name },
  timestamp: new Date(1_700_000_000_000 + id * 1000).toISOString(),
});
const run = (s: State, events: StoreEvent[]): State => events.reduce(reduce, s);

/** What a READY determines: the rest (messages, members, presence) is read or heard later. */
const fromReady = (s: State) => ({
  me: s.me,
  synced: s.synced,
  guilds: s.guilds,
  readStates: s.readStates,
  channelIds: [...s.channels.keys()].filter((id) =>
    [...s.guilds.values()].some((g) => g.channels.some((c) => c.id === id)),
  ),
});

describe('the store: reduce(state, event)', () => {
  it('a READY followed by its events equals a fresh READY of the same moment', () => {
    const before = ready([guild(10, [11, 12]), guild(20, [21])], [[11, 100]]);
    const events: StoreEvent[] = [
      { type: 'GUILD_CREATE', d: guild(30, [31]) },
      { type: 'CHANNEL_CREATE', d: channel(13, 10, 'new') },
      { type: 'CHANNEL_UPDATE', d: { ...channel(12, 10), name: 'renamed', topic: 't' } },
      { type: 'CHANNEL_DELETE', d: { id: 11, guildId: 10 } },
      { type: 'GUILD_UPDATE', d: { id: 10, name: 'HQ', ownerId: alice.id } },
      {
        type: 'GUILD_ROLES_UPDATE',
        d: {
          guildId: 10,
          roles: [
            { id: 10, name: '@everyone', permissions: 3 },
            { id: 15, name: 'mods', permissions: 16 },
          ] as Guild['roles'],
        },
      },
      { type: 'GUILD_DELETE', d: { id: 20 } },
      // my own message marks its channel read (D48), as the server does
      { type: 'MESSAGE_CREATE', d: msg(200, 13, alice) },
      { type: 'READ', d: { channelId: 31, messageId: 150 } },
    ];
    const after = run(reduce(initial, { type: 'READY', d: before }), events);
    const fresh = reduce(initial, {
      type: 'READY',
      d: ready(
        [
          guild(10, [], {
            name: 'HQ',
            channels: [{ ...channel(12, 10), name: 'renamed', topic: 't' }, channel(13, 10, 'new')],
            roles: [
              { id: 10, name: '@everyone', permissions: 3 },
              { id: 15, name: 'mods', permissions: 16 },
            ] as Guild['roles'],
          }),
          guild(30, [31]),
        ],
        [
          [11, 100],
          [13, 200],
          [31, 150],
        ],
      ),
    });
    // The deleted channel's read mark stays on the server too (it is harmless); compare the
    // marks of channels that exist.
    const live = (s: State) => new Map([...s.readStates].filter(([c]) => c !== 11));
    expect({ ...fromReady(after), readStates: live(after) }).toEqual({
      ...fromReady(fresh),
      readStates: live(fresh),
    });
    // and the fresh READY applied on top changes none of it
    const again = reduce(after, {
      type: 'READY',
      d: ready([...fresh.guilds.values()], [...fresh.readStates]),
    });
    expect(fromReady(again)).toEqual(fromReady(fresh));
  });

  it('D66: mention counts, lastMessageId and presences from READY, kept live — equal to a fresh READY', () => {
    const g = guild(10, [11, 12]);
    g.channels = g.channels.map((c) => (c.id === 11 ? { ...c, lastMessageId: 100 } : c));
    const dm = { channelId: 50, recipient: bob, lastMessageId: 40 };
    const mention = (m: Message, extra: Partial<Message>): Message => ({ ...m, ...extra });
    const dmMsg = (id: number): Message => {
      const { guildId: _, ...rest } = msg(id, 50);
      return rest;
    };
    let s = reduce(initial, {
      type: 'READY',
      d: ready(
        [g],
        [
          [11, 100],
          [50, 40],
        ],
        {
          presences: [{ userId: bob.id, status: 'online' }],
          dms: [dm],
        },
      ),
    });
    // right on a fresh load: channel 11 is read, the DM is read, nobody mentioned me yet
    expect(s.latest.get(11)).toBe(100);
    expect(s.latest.get(50)).toBe(40);
    expect(s.mentions.size).toBe(0);
    expect(s.presence.get(bob.id)).toBe('online');
    const events: StoreEvent[] = [
      { type: 'PAGE', d: { channelId: 11, messages: [msg(100, 11)], newest: true } },
      { type: 'PAGE', d: { channelId: 12, messages: [], newest: true } },
      { type: 'MESSAGE_CREATE', d: mention(msg(101, 11), { mentions: [alice.id] }) },
      { type: 'MESSAGE_CREATE', d: msg(102, 11) },
      { type: 'MESSAGE_CREATE', d: mention(msg(103, 12), { mentionEveryone: true }) },
      { type: 'DM_MESSAGE_CREATE', d: dmMsg(41) },
      // an edit that removes the mention; a mention deleted while unread
      { type: 'MESSAGE_UPDATE', d: { ...msg(103, 12), content: 'calm' } },
      { type: 'MESSAGE_CREATE', d: mention(msg(104, 11), { mentions: [alice.id] }) },
      { type: 'MESSAGE_DELETE', d: { id: 104, channelId: 11, guildId: 10 } },
      // another device read #11 up to 101: the server says what is left there
      { type: 'MESSAGE_ACK', d: { channelId: 11, lastReadId: 101, mentionCount: 0 } },
      { type: 'PRESENCE_UPDATE', d: { userId: bob.id, status: 'offline' } },
      { type: 'PRESENCE_UPDATE', d: { userId: 3, status: 'online' } },
    ];
    const mid = run(s, events.slice(0, 6));
    expect([...mid.mentions]).toEqual([
      [11, 1],
      [12, 1],
      [50, 1],
    ]);
    s = run(s, events);
    const fresh = reduce(initial, {
      type: 'READY',
      d: ready(
        [
          {
            ...g,
            channels: g.channels.map((c) => ({ ...c, lastMessageId: c.id === 11 ? 102 : 103 })),
          },
        ],
        [
          [11, 101, 0],
          [50, 40, 1],
        ],
        {
          presences: [{ userId: 3, status: 'online' }],
          dms: [{ ...dm, lastMessageId: 41 }],
        },
      ),
    });
    const view = (x: State) => ({
      mentions: x.mentions,
      readStates: x.readStates,
      online: [...x.presence].filter(([, v]) => v === 'online').map(([k]) => k),
      unread: [11, 12, 50].map((c) => (x.latest.get(c) ?? 0) > (x.readStates.get(c) ?? 0)),
      dms: x.dms.map((d) => [d.channelId, d.lastMessageId]),
    });
    expect(view(s)).toEqual(view(fresh));
    expect(view(s).mentions).toEqual(new Map([[50, 1]]));
    // reading the DM to its newest message clears its badge; an ack older than my own mark is
    // not taken (mine is on its way)
    s = reduce(s, { type: 'READ', d: { channelId: 50, messageId: 41 } });
    expect(s.mentions.size).toBe(0);
    s = reduce(s, { type: 'MESSAGE_ACK', d: { channelId: 50, lastReadId: 40, mentionCount: 1 } });
    expect(s.mentions.size).toBe(0);
    // my own message is no mention and marks the channel read
    s = reduce(s, {
      type: 'MESSAGE_CREATE',
      d: mention(msg(105, 12, alice), { mentionEveryone: true }),
    });
    expect(s.mentions.get(12)).toBeUndefined();
    // READ_STATES (a refetch after a role mention) is taken like acks
    s = reduce(s, {
      type: 'READ_STATES',
      d: [
        { channelId: 12, lastReadId: 105, mentionCount: 0 },
        { channelId: 11, lastReadId: 101, mentionCount: 2 },
      ],
    });
    expect(s.mentions.get(11)).toBe(2);
    // a deleted channel forgets its count
    s = reduce(s, { type: 'CHANNEL_DELETE', d: { id: 11, guildId: 10 } });
    expect(s.mentions.get(11)).toBeUndefined();
  });

  it('a later READY without a guild says it was lost and forgets its messages', () => {
    let s = reduce(initial, { type: 'READY', d: ready([guild(10, [11]), guild(20, [21])]) });
    s = reduce(s, { type: 'PAGE', d: { channelId: 21, messages: [msg(5, 21)], newest: true } });
    expect(s.lostGuild).toBeNull();
    s = reduce(s, { type: 'READY', d: ready([guild(10, [11])]) });
    expect(s.lostGuild).toBe('g20');
    expect(s.channels.has(21)).toBe(false);
    expect(s.guilds.has(20)).toBe(false);
  });

  it('LOGOUT is the one reset point: everything back to the initial state', () => {
    let s = reduce(initial, { type: 'SESSION', d: alice });
    s = run(s, [
      { type: 'READY', d: ready([guild(10, [11])], [[11, 3]]) },
      { type: 'PAGE', d: { channelId: 11, messages: [msg(1, 11), msg(2, 11)], newest: true } },
      {
        type: 'MEMBERS',
        d: { guildId: 10, members: [{ user: { id: 2, name: 'bob', avatar: '' }, joinedAt: '' }] },
      },
      { type: 'PRESENCE_UPDATE', d: { userId: 2, status: 'online' } },
      { type: 'TYPING_START', d: { channelId: 11, userId: 2, at: '' }, now: 1000 },
      {
        type: 'DMS',
        d: [{ channelId: 50, recipient: { ...bob, isBot: false }, lastMessageId: 9 }],
      },
    ]);
    expect(s).not.toEqual(initial);
    expect(reduce(s, { type: 'LOGOUT', d: null })).toBe(initial);
  });

  it('messages: pages and events merge by id, sorted, without duplicates', () => {
    let s = reduce(initial, { type: 'READY', d: ready([guild(10, [11])]) });
    // a message for a channel nobody opened is not kept (its first page will hold it)…
    s = reduce(s, { type: 'MESSAGE_CREATE', d: msg(7, 11) });
    expect(s.channels.has(11)).toBe(false);
    expect(s.latest.get(11)).toBe(7); // …but it makes the channel unread
    s = reduce(s, {
      type: 'PAGE',
      d: { channelId: 11, messages: [msg(7, 11), msg(5, 11)], hasOlder: true, newest: true },
    });
    s = run(s, [
      { type: 'MESSAGE_CREATE', d: msg(8, 11) },
      { type: 'MESSAGE_CREATE', d: msg(8, 11) }, // a resume replays it
      { type: 'PAGE', d: { channelId: 11, messages: [msg(3, 11), msg(1, 11)], hasOlder: false } },
      { type: 'MESSAGE_UPDATE', d: { ...msg(5, 11), content: 'edited', editedTimestamp: 'x' } },
      { type: 'MESSAGE_DELETE', d: { id: 3, channelId: 11, guildId: 10 } },
    ]);
    const c = s.channels.get(11)!;
    expect(c.items.map((m) => m.id)).toEqual([1, 5, 7, 8]);
    expect(c.items[1]?.content).toBe('edited');
    expect(c.hasOlder).toBe(false);
    expect(s.latest.get(11)).toBe(8);
  });

  it('typing marks last 8 s (D51) and end with the typist’s message', () => {
    let s = reduce(initial, { type: 'SESSION', d: alice });
    s = reduce(s, { type: 'TYPING_START', d: { channelId: 11, userId: 2, at: '' }, now: 1000 });
    s = reduce(s, { type: 'TYPING_START', d: { channelId: 11, userId: 1, at: '' }, now: 1000 });
    expect([...(s.typing.get(11)?.keys() ?? [])]).toEqual([2]); // never myself
    expect(reduce(s, { type: 'TYPING_EXPIRE', d: { channelId: 11, now: 5000 } })).toBe(s);
    expect(
      reduce(s, { type: 'TYPING_EXPIRE', d: { channelId: 11, now: 9001 } }).typing.has(11),
    ).toBe(false);
    expect(reduce(s, { type: 'MESSAGE_CREATE', d: msg(1, 11) }).typing.has(11)).toBe(false);
  });

  it('an event that changes nothing keeps the state itself (no re-render)', () => {
    const s = reduce(initial, { type: 'READY', d: ready([guild(10, [11])]) });
    expect(reduce(s, { type: 'MESSAGE_DELETE', d: { id: 1, channelId: 11, guildId: 10 } })).toBe(s);
    expect(reduce(s, { type: 'GUILD_UPDATE', d: { id: 99, name: 'x', ownerId: 1 } })).toBe(s);
    expect(reduce(s, { type: 'READ', d: { channelId: 11, messageId: 0 } })).toBe(s);
  });

  it('DM messages move their DM to the top of the list', () => {
    let s = reduce(initial, { type: 'SESSION', d: alice });
    s = reduce(s, {
      type: 'DMS',
      d: [
        { channelId: 50, recipient: { ...bob, isBot: false }, lastMessageId: 9 },
        {
          channelId: 51,
          recipient: { ...bob, isBot: false, id: 3, name: 'carol' },
          lastMessageId: 4,
        },
      ],
    });
    s = reduce(s, {
      type: 'DM_MESSAGE_CREATE',
      d: (({ guildId: _, ...m }) => m)(msg(12, 51)), // DM messages carry no guildId (D17)
    });
    expect(s.dms.map((d) => [d.channelId, d.lastMessageId])).toEqual([
      [51, 12],
      [50, 9],
    ]);
    expect(s.latest.get(51)).toBe(12);
  });

  it('D63 reactions: counts, mine marked, a repeat changes nothing; pins mark the message', () => {
    let s = reduce(initial, { type: 'SESSION', d: bob });
    s = reduce(s, { type: 'PAGE', d: { channelId: 11, messages: [msg(1, 11)], newest: true } });
    const r = (
      type: 'MESSAGE_REACTION_ADD' | 'MESSAGE_REACTION_REMOVE',
      userId: number,
      emoji = '👍',
    ) => ({ type, d: { userId, channelId: 11, messageId: 1, emoji } }) as StoreEvent;
    s = run(s, [
      r('MESSAGE_REACTION_ADD', alice.id),
      r('MESSAGE_REACTION_ADD', bob.id),
      r('MESSAGE_REACTION_ADD', bob.id), // replayed by a resume
      r('MESSAGE_REACTION_ADD', alice.id, '🎉'),
    ]);
    expect(s.channels.get(11)?.items[0]?.reactions).toEqual([
      { emoji: '👍', count: 2, me: true },
      { emoji: '🎉', count: 1, me: false },
    ]);
    s = run(s, [
      r('MESSAGE_REACTION_REMOVE', bob.id),
      r('MESSAGE_REACTION_REMOVE', alice.id, '🎉'),
    ]);
    expect(s.channels.get(11)?.items[0]?.reactions).toEqual([{ emoji: '👍', count: 1, me: false }]);
    s = reduce(s, r('MESSAGE_REACTION_REMOVE', alice.id));
    expect(s.channels.get(11)?.items[0]).not.toHaveProperty('reactions'); // D56: absent when none
    s = reduce(s, { type: 'PINNED', d: { channelId: 11, messageId: 1, pinned: true } });
    expect(s.channels.get(11)?.items[0]?.pinned).toBe(true);
    s = reduce(s, { type: 'PINNED', d: { channelId: 11, messageId: 1, pinned: false } });
    expect(s.channels.get(11)?.items[0]).not.toHaveProperty('pinned');
  });
});
