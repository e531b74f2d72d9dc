import { batch, computed, signal, type Signal } from '@preact/signals';
import { ApiError, get, post, put, sessionLost } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { Gateway } from '../lib/gateway.js';
import type {
  DmSummary,
  EventDataMap,
  Guild,
  MemberSummary,
  Message,
  MessageList,
  PeopleEventDataMap,
  ReadyPerson,
  User,
} from '../lib/types.js';
import { toast } from '../ui/toast.js';

/** Everything the app knows, as signals; the gateway's dispatches keep it current (D51). */
export const me = signal<User | null>(null);
export const guilds = signal<ReadonlyMap<number, Guild>>(new Map());
export const dms = signal<DmSummary[]>([]);
export const readStates = signal<ReadonlyMap<number, number>>(new Map());
/** the newest message id seen per channel (for unread marks) */
export const latest = signal<ReadonlyMap<number, number>>(new Map());
export const presence = signal<ReadonlyMap<number, 'online' | 'offline'>>(new Map());
/** channel → user → until (ms), D51: shown for 8 s */
export const typing = signal<ReadonlyMap<number, ReadonlyMap<number, number>>>(new Map());
export const members = signal<ReadonlyMap<number, MemberSummary[]>>(new Map());
/** a guild the person just lost (kicked, banned, deleted): the chat view says so */
export const lostGuild = signal<string | null>(null);
/** the first READY has arrived (guilds and read states are known) */
export const synced = signal(false);

export const guildList = computed(() => [...guilds.value.values()]);

const setIn = <K, V>(s: Signal<ReadonlyMap<K, V>>, k: K, v: V | undefined): void => {
  const m = new Map(s.value);
  if (v === undefined) m.delete(k);
  else m.set(k, v);
  s.value = m;
};

export function unread(channelId: number): boolean {
  const last = latest.value.get(channelId);
  return last !== undefined && last > (readStates.value.get(channelId) ?? 0);
}

/** D16 pages of one channel (guild or DM), oldest first in memory, keyed by id. */
export class ChannelLog {
  readonly items = signal<Message[]>([]);
  readonly hasOlder = signal(true);
  readonly loading = signal(false);
  loaded = false;

  constructor(
    readonly channelId: number,
    readonly kind: 'guild' | 'dm',
  ) {}

  get base(): string {
    return this.kind === 'dm'
      ? `/api/v1/dm/channels/${this.channelId}/messages`
      : `/api/v1/channels/${this.channelId}/messages`;
  }

  /** Adds messages (any order), dropping duplicates: a resume may replay what a refetch got. */
  merge(list: Message[]): void {
    if (list.length === 0) return;
    const byId = new Map(this.items.value.map((m) => [m.id, m]));
    for (const m of list) byId.set(m.id, m);
    this.items.value = [...byId.values()].sort((a, b) => a.id - b.id);
    const newest = this.items.value[this.items.value.length - 1];
    if (newest) noteLatest(this.channelId, newest.id);
  }

  update(m: Message): void {
    if (!this.items.value.some((x) => x.id === m.id)) return;
    this.items.value = this.items.value.map((x) => (x.id === m.id ? m : x));
  }

  remove(id: number): void {
    this.items.value = this.items.value.filter((x) => x.id !== id);
  }

  async loadNewest(): Promise<void> {
    this.loading.value = true;
    try {
      const page = await get<MessageList>(`${this.base}?limit=50`);
      batch(() => {
        this.items.value = [];
        this.merge(page.messages);
        this.hasOlder.value = page.hasMore; // D16: older ones exist past this page
      });
      this.loaded = true;
    } finally {
      this.loading.value = false;
    }
  }

  async loadOlder(): Promise<void> {
    if (this.loading.value || !this.hasOlder.value) return;
    const oldest = this.items.value[0];
    if (!oldest) return this.loadNewest();
    this.loading.value = true;
    try {
      const page = await get<MessageList>(`${this.base}?before=${oldest.id}&limit=50`);
      batch(() => {
        this.merge(page.messages);
        this.hasOlder.value = page.hasMore;
      });
    } finally {
      this.loading.value = false;
    }
  }

  /** After a session could not be resumed: read what came after the newest we hold (D51). */
  async catchUp(): Promise<void> {
    if (!this.loaded) return;
    for (let pages = 0; pages < 5; pages++) {
      const newest = this.items.value[this.items.value.length - 1];
      if (!newest) return this.loadNewest();
      const page = await get<MessageList>(`${this.base}?after=${newest.id}&limit=100`);
      this.merge(page.messages);
      if (!page.hasMore) return;
    }
    await this.loadNewest(); // too far behind: start again from the newest page
  }
}

const logs = new Map<number, ChannelLog>();
export function channelLog(channelId: number, kind: 'guild' | 'dm'): ChannelLog {
  let l = logs.get(channelId);
  if (!l) {
    l = new ChannelLog(channelId, kind);
    logs.set(channelId, l);
  }
  return l;
}

function noteLatest(channelId: number, id: number): void {
  if ((latest.value.get(channelId) ?? 0) < id) setIn(latest, channelId, id);
}

/** D48: the read mark follows the person across devices. */
let readTimers = new Map<number, ReturnType<typeof setTimeout>>();
export function markRead(channelId: number, messageId: number): void {
  if ((readStates.value.get(channelId) ?? 0) >= messageId) return;
  setIn(readStates, channelId, messageId);
  const t = readTimers.get(channelId);
  if (t) clearTimeout(t);
  readTimers.set(
    channelId,
    setTimeout(() => {
      readTimers.delete(channelId);
      put(`/app/v1/channels/${channelId}/read`, { messageId }).catch(() => {
        /* best effort: the mark is local until the next success */
      });
    }, 800),
  );
}

// ---- members ----
const memberLoads = new Map<number, Promise<void>>();
export function loadMembers(guildId: number, force = false): Promise<void> {
  const running = memberLoads.get(guildId);
  if (running && !force) return running;
  const p = (async () => {
    const all: MemberSummary[] = [];
    let after = 0;
    for (let i = 0; i < 10; i++) {
      const page = await get<{ members: MemberSummary[]; hasMore: boolean }>(
        `/api/v1/guilds/${guildId}/members?limit=1000${after ? `&after=${after}` : ''}`,
      );
      all.push(...page.members);
      const last = page.members[page.members.length - 1];
      if (!page.hasMore || !last) break;
      after = last.user.id;
    }
    setIn(members, guildId, all);
  })();
  memberLoads.set(guildId, p);
  p.catch(() => memberLoads.delete(guildId));
  return p;
}

export async function loadDms(): Promise<void> {
  const r = await get<{ dms: DmSummary[] }>('/app/v1/users/@me/dms');
  dms.value = r.dms;
  for (const d of r.dms) if (d.lastMessageId) noteLatest(d.channelId, d.lastMessageId);
}

export async function refreshGuild(guildId: number): Promise<void> {
  try {
    const g = await get<Guild>(`/app/v1/guilds/${guildId}`);
    setIn(guilds, g.id, g);
  } catch {
    /* gone: GUILD_DELETE says so */
  }
}
const guildRefresh = new Map<number, ReturnType<typeof setTimeout>>();
function refreshGuildSoon(guildId: number): void {
  if (guildRefresh.has(guildId)) return;
  guildRefresh.set(
    guildId,
    setTimeout(() => {
      guildRefresh.delete(guildId);
      void refreshGuild(guildId);
    }, 1500),
  );
}

// ---- the gateway ----
export const gateway = new Gateway({
  onReady(raw, again) {
    const d = raw as ReadyPerson;
    // A guild missing from a fresh READY was lost while we were away (kicked, banned, deleted):
    // no GUILD_DELETE reached us, so say it the same way.
    const gone = [...guilds.value.values()].filter((g) => !d.guilds.some((x) => x.id === g.id));
    batch(() => {
      if (again && gone[0]) lostGuild.value = gone[0].name;
      me.value = d.user;
      guilds.value = new Map(d.guilds.map((g) => [g.id, g]));
      readStates.value = new Map(d.readStates.map((r) => [r.channelId, r.lastReadId]));
      synced.value = true;
    });
    void loadDms().catch(() => {});
    if (again) {
      // D51: the session could not be resumed; read what was missed, merge by id.
      for (const l of logs.values()) void l.catchUp().catch(() => {});
      for (const g of members.value.keys()) void loadMembers(g, true).catch(() => {});
    }
  },
  onResumed() {},
  onDispatch: (t, d) => applyEvent(t, d),
  onAuthFailed() {
    sessionLost.value = true;
  },
});

type AnyEvent = EventDataMap & PeopleEventDataMap;

function patchGuild(id: number, f: (g: Guild) => Guild): void {
  const g = guilds.value.get(id);
  if (g) setIn(guilds, id, f(g));
}

export function applyEvent(t: string, data: unknown): void {
  const ev = <K extends keyof AnyEvent>(_k: K) => data as AnyEvent[K];
  switch (t) {
    case 'MESSAGE_CREATE':
    case 'DM_MESSAGE_CREATE': {
      const m = ev('MESSAGE_CREATE');
      logs.get(m.channelId)?.merge([m]);
      noteLatest(m.channelId, m.id);
      if (m.author.id === me.value?.id) markRead(m.channelId, m.id);
      const tm = typing.value.get(m.channelId);
      if (tm?.has(m.author.id)) {
        const n = new Map(tm);
        n.delete(m.author.id);
        setIn(typing, m.channelId, n);
      }
      if (t === 'DM_MESSAGE_CREATE') {
        const i = dms.value.findIndex((x) => x.channelId === m.channelId);
        if (i < 0) void loadDms().catch(() => {});
        else {
          const item = { ...dms.value[i]!, lastMessageId: m.id };
          dms.value = [item, ...dms.value.filter((_, j) => j !== i)];
        }
      }
      break;
    }
    case 'MESSAGE_UPDATE':
    case 'DM_MESSAGE_UPDATE': {
      const m = ev('MESSAGE_UPDATE');
      logs.get(m.channelId)?.update(m);
      break;
    }
    case 'MESSAGE_DELETE':
    case 'DM_MESSAGE_DELETE': {
      const d = ev('DM_MESSAGE_DELETE');
      logs.get(d.channelId)?.remove(d.id);
      break;
    }
    case 'GUILD_CREATE': {
      const g = ev('GUILD_CREATE');
      setIn(guilds, g.id, g);
      break;
    }
    case 'GUILD_UPDATE': {
      const g = ev('GUILD_UPDATE');
      patchGuild(g.id, (old) => ({ ...old, ...g }));
      break;
    }
    case 'GUILD_DELETE': {
      const { id } = ev('GUILD_DELETE');
      const g = guilds.value.get(id);
      if (g) {
        lostGuild.value = g.name;
        for (const c of g.channels) logs.delete(c.id);
      }
      setIn(guilds, id, undefined);
      setIn(members, id, undefined);
      memberLoads.delete(id);
      break;
    }
    case 'CHANNEL_CREATE':
    case 'CHANNEL_UPDATE': {
      const c = ev('CHANNEL_CREATE');
      patchGuild(c.guildId, (g) => ({
        ...g,
        channels: g.channels.some((x) => x.id === c.id)
          ? g.channels.map((x) => (x.id === c.id ? c : x))
          : [...g.channels, c],
      }));
      break;
    }
    case 'CHANNEL_DELETE': {
      const c = ev('CHANNEL_DELETE');
      logs.delete(c.id);
      patchGuild(c.guildId, (g) => ({ ...g, channels: g.channels.filter((x) => x.id !== c.id) }));
      break;
    }
    case 'GUILD_ROLES_UPDATE': {
      const r = ev('GUILD_ROLES_UPDATE');
      patchGuild(r.guildId, (g) => ({ ...g, roles: r.roles }));
      refreshGuildSoon(r.guildId); // my permissions may have changed
      break;
    }
    case 'GUILD_MEMBER_ADD': {
      const m = ev('GUILD_MEMBER_ADD');
      const list = members.value.get(m.guildId);
      if (list && !list.some((x) => x.user.id === m.user.id)) {
        const next = [...list, { user: m.user, joinedAt: m.joinedAt }];
        next.sort((a, b) => a.user.id - b.user.id);
        setIn(members, m.guildId, next);
      }
      refreshGuildSoon(m.guildId); // a bot joining shows up in `bots`
      break;
    }
    case 'GUILD_MEMBER_REMOVE': {
      const m = ev('GUILD_MEMBER_REMOVE');
      const list = members.value.get(m.guildId);
      if (list)
        setIn(
          members,
          m.guildId,
          list.filter((x) => x.user.id !== m.user.id),
        );
      break;
    }
    case 'GUILD_MEMBER_UPDATE': {
      const m = ev('GUILD_MEMBER_UPDATE');
      if (m.user.id === me.value?.id) refreshGuildSoon(m.guildId);
      break;
    }
    case 'TYPING_START': {
      const d = ev('TYPING_START');
      if (d.userId === me.value?.id) break;
      const n = new Map(typing.value.get(d.channelId) ?? []);
      n.set(d.userId, Date.now() + 8000);
      setIn(typing, d.channelId, n);
      setTimeout(() => {
        const cur = typing.value.get(d.channelId);
        if (cur && (cur.get(d.userId) ?? 0) <= Date.now()) {
          const x = new Map(cur);
          x.delete(d.userId);
          setIn(typing, d.channelId, x);
        }
      }, 8100);
      break;
    }
    case 'PRESENCE_UPDATE': {
      const p = ev('PRESENCE_UPDATE');
      setIn(presence, p.userId, p.status);
      break;
    }
  }
}

/** Start (after login) and stop (logout) the live part. */
export function startSession(user: User): void {
  me.value = user;
  gateway.start();
}
export function endSession(): void {
  gateway.stop();
  batch(() => {
    me.value = null;
    synced.value = false;
    guilds.value = new Map();
    dms.value = [];
    readStates.value = new Map();
    members.value = new Map();
    latest.value = new Map();
  });
  logs.clear();
  memberLoads.clear();
  readTimers = new Map();
}

export { toast };

/** D47: ends this session (204; the server clears the cookie) and forgets everything. */
export async function logout(): Promise<void> {
  try {
    await post('/app/v1/auth/logout');
  } catch (x) {
    if (!(x instanceof ApiError)) throw x;
  }
  endSession();
  navigate('/login', true);
}
