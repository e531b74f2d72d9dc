import { computed, signal } from '@preact/signals';
import { formerNames } from './names.js';
import { ApiError, call, get, post, sessionLost } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { Gateway } from '../lib/gateway.js';
import type {
  DmSummary,
  Guild,
  MemberSummary,
  Message,
  MessageList,
  ReadState,
  ReadyPerson,
  User,
} from '../lib/types.js';
import { toast } from '../ui/toast.js';
import { resetNotifySettings } from '../ui/notify-menu.js';
import { initial, reduce, TYPING_MS, type State, type StoreEvent } from './reduce.js';

/**
 * The app's store: one signal holding the State of reduce.ts, changed only by `dispatch`. The
 * signals below are read-only views of it, so screens keep reading `me.value`, `guilds.value`….
 * This module does the side effects around the pure reducer: requests, timers, the gateway.
 */
export const state = signal<State>(initial);
export function dispatch(e: StoreEvent): void {
  state.value = reduce(state.value, e);
}

export const me = computed(() => state.value.me);
export const guilds = computed(() => state.value.guilds);
export const dms = computed(() => state.value.dms);
export const readStates = computed(() => state.value.readStates);
export const latest = computed(() => state.value.latest);
export const presence = computed(() => state.value.presence);
export const typing = computed(() => state.value.typing);
export const members = computed(() => state.value.members);
export const lostGuild = computed(() => state.value.lostGuild);
export const synced = computed(() => state.value.synced);

/** D63: CHANNEL_PINS_UPDATE counts per channel, so an open pins panel reads them again */
export const pinsChanged = signal<ReadonlyMap<number, number>>(new Map());

export const guildList = computed(() => [...guilds.value.values()]);

/** D66: unread messages addressing me, per channel (mentions; in a DM every message). */
export const mentions = computed(() => state.value.mentions);
export function mentionCount(channelId: number): number {
  return mentions.value.get(channelId) ?? 0;
}

export function unread(channelId: number): boolean {
  const last = latest.value.get(channelId);
  return last !== undefined && last > (readStates.value.get(channelId) ?? 0);
}

const NO_MESSAGES: readonly Message[] = [];

/**
 * One channel's messages (guild or DM): D16 pages read into the store. The messages themselves
 * live in the State; this handle only knows the channel's address and whether a page is loading.
 */
export class ChannelLog {
  readonly items = computed(() => state.value.channels.get(this.channelId)?.items ?? NO_MESSAGES);
  readonly hasOlder = computed(() => state.value.channels.get(this.channelId)?.hasOlder ?? true);
  readonly loading = signal(false);

  constructor(
    readonly channelId: number,
    readonly kind: 'guild' | 'dm',
  ) {}

  get loaded(): boolean {
    return state.value.channels.get(this.channelId)?.loaded ?? false;
  }

  get base(): string {
    return this.kind === 'dm'
      ? `/api/v1/dm/channels/${this.channelId}/messages`
      : `/api/v1/channels/${this.channelId}/messages`;
  }

  /** Adds messages (any order), by id: a resume may replay what a refetch got. */
  merge(list: readonly Message[]): void {
    dispatch({ type: 'PAGE', d: { channelId: this.channelId, messages: list } });
  }

  update(m: Message): void {
    dispatch({ type: 'MESSAGE_UPDATE', d: m });
  }

  remove(id: number): void {
    dispatch({
      type: 'DM_MESSAGE_DELETE',
      d: { id, channelId: this.channelId },
    });
  }

  async loadNewest(): Promise<void> {
    this.loading.value = true;
    try {
      const page = await get<MessageList>(`${this.base}?limit=50`);
      // D16: older ones exist past this page when hasMore
      dispatch({
        type: 'PAGE',
        d: {
          channelId: this.channelId,
          messages: page.messages,
          hasOlder: page.hasMore,
          newest: true,
        },
      });
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
      dispatch({
        type: 'PAGE',
        d: { channelId: this.channelId, messages: page.messages, hasOlder: page.hasMore },
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

/** D48: the read mark follows the person across devices. */
let readTimers = new Map<number, ReturnType<typeof setTimeout>>();
export function markRead(channelId: number, messageId: number): void {
  if ((readStates.value.get(channelId) ?? 0) >= messageId) return;
  dispatch({ type: 'READ', d: { channelId, messageId } });
  scheduleRead(channelId, messageId);
}
/** marks waiting for their timer (sent at once when the page goes away) */
const pendingReads = new Map<number, number>();
function scheduleRead(channelId: number, messageId: number): void {
  const t = readTimers.get(channelId);
  if (t) clearTimeout(t);
  pendingReads.set(channelId, messageId);
  readTimers.set(
    channelId,
    setTimeout(() => {
      readTimers.delete(channelId);
      pendingReads.delete(channelId);
      sendRead(channelId, messageId);
    }, 800),
  );
}
function sendRead(channelId: number, messageId: number): void {
  // keepalive: a navigation right after must not cancel it (D66: the badge would come back)
  call('PUT', `/app/v1/channels/${channelId}/read`, { messageId }, { keepalive: true }).catch(
    () => {
      /* best effort: the mark is local until the next success */
    },
  );
}
// D66: a reload or a closed tab right after reading must not bring the badge back: the marks
// still waiting go out now (keepalive outlives the page).
if (typeof window !== 'undefined')
  window.addEventListener('pagehide', () => {
    for (const [channelId, messageId] of pendingReads) {
      clearTimeout(readTimers.get(channelId));
      readTimers.delete(channelId);
      // fetch at once, in this handler (lib/api's queue would start it after the page is gone)
      void fetch(`/app/v1/channels/${channelId}/read`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messageId }),
        credentials: 'same-origin',
        keepalive: true,
      }).catch(() => {});
    }
    pendingReads.clear();
  });

/** D66: the server's read states again (a role mention, an edit or delete of an unseen message). */
let statesTimer: ReturnType<typeof setTimeout> | undefined;
function refreshReadStatesSoon(): void {
  if (statesTimer) return;
  statesTimer = setTimeout(() => {
    statesTimer = undefined;
    get<{ readStates: ReadState[] }>('/app/v1/users/@me/read-states')
      .then((r) => dispatch({ type: 'READ_STATES', d: r.readStates }))
      .catch(() => {});
  }, 400);
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
        `/api/v1/guilds/${guildId}/members?limit=1000&withRoles=true${after ? `&after=${after}` : ''}`,
      );
      all.push(...page.members);
      const last = page.members[page.members.length - 1];
      if (!page.hasMore || !last) break;
      after = last.user.id;
    }
    dispatch({ type: 'MEMBERS', d: { guildId, members: all } });
  })();
  memberLoads.set(guildId, p);
  p.catch(() => memberLoads.delete(guildId));
  return p;
}

export async function loadDms(): Promise<void> {
  const r = await get<{ dms: DmSummary[] }>('/app/v1/users/@me/dms');
  dispatch({ type: 'DMS', d: r.dms });
}

export async function refreshGuild(guildId: number): Promise<void> {
  try {
    dispatch({ type: 'GUILD', d: await get<Guild>(`/app/v1/guilds/${guildId}`) });
  } catch {
    /* gone: GUILD_DELETE says so */
  }
}
let guildRefresh = new Map<number, ReturnType<typeof setTimeout>>();
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
    dispatch({ type: 'READY', d: raw as ReadyPerson });
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

/** A gateway dispatch: into the reducer, then the requests and timers it calls for. */
export function applyEvent(t: string, data: unknown): void {
  const e = { type: t, d: data, now: Date.now() } as StoreEvent;
  const before = state.value;
  dispatch(e);
  switch (e.type) {
    case 'DM_MESSAGE_CREATE':
      // A DM we do not list yet (its first message): read the list again.
      if (!state.value.dms.some((x) => x.channelId === e.d.channelId))
        void loadDms().catch(() => {});
      break;
    case 'MESSAGE_CREATE':
      // D66: a role mention may address me (my roles are the server's to know)
      if (e.d.author.id !== before.me?.id && (e.d.mentionRoles ?? []).length > 0)
        refreshReadStatesSoon();
      break;
    case 'MESSAGE_UPDATE':
    case 'DM_MESSAGE_UPDATE':
    case 'MESSAGE_DELETE':
    case 'DM_MESSAGE_DELETE': {
      // D66: a message this app never loaded may have addressed me, or now does
      const ch = before.channels.get(e.d.channelId);
      const seen = ch?.items.some((x) => x.id === e.d.id) ?? false;
      const unseenMention =
        !seen &&
        ((before.mentions.get(e.d.channelId) ?? 0) > 0 ||
          ('author' in e.d &&
            ((e.d.mentions ?? []).length > 0 ||
              (e.d.mentionRoles ?? []).length > 0 ||
              e.d.mentionEveryone === true)));
      const roleEdit = seen && 'mentionRoles' in e.d && e.d.author.id !== before.me?.id;
      if (unseenMention || roleEdit) refreshReadStatesSoon();
      break;
    }
    case 'GUILD_DELETE':
      memberLoads.delete(e.d.id);
      break;
    case 'GUILD_MEMBER_REMOVE':
      formerNames.set(e.d.user.id, e.d.user.name); // the audit log still names them
      break;
    case 'CHANNEL_DELETE':
      logs.delete(e.d.id);
      break;
    case 'GUILD_ROLES_UPDATE':
    case 'GUILD_MEMBER_ADD': // a bot joining shows up in `bots`
      refreshGuildSoon(e.d.guildId); // my permissions may have changed
      break;
    case 'GUILD_MEMBER_UPDATE':
      if (e.d.user.id === before.me?.id) refreshGuildSoon(e.d.guildId);
      break;
    case 'CHANNEL_PINS_UPDATE': {
      const id = e.d.channelId;
      pinsChanged.value = new Map(pinsChanged.value).set(id, (pinsChanged.value.get(id) ?? 0) + 1);
      break;
    }
    case 'TYPING_START': {
      const channelId = e.d.channelId;
      setTimeout(
        () => dispatch({ type: 'TYPING_EXPIRE', d: { channelId, now: Date.now() } }),
        TYPING_MS + 100,
      );
      break;
    }
  }
  // What I sent (here or on another device) is read: keep the server's mark in step.
  if (
    (e.type === 'MESSAGE_CREATE' || e.type === 'DM_MESSAGE_CREATE') &&
    e.d.author.id === before.me?.id
  )
    scheduleRead(e.d.channelId, e.d.id);
}

/** Start (after login) and stop (logout) the live part. */
export function startSession(user: User): void {
  dispatch({ type: 'SESSION', d: user });
  gateway.start();
}

/** The one reset point: the gateway stops, the State is `initial`, timers and loads forgotten. */
export function endSession(): void {
  gateway.stop();
  dispatch({ type: 'LOGOUT', d: null });
  pinsChanged.value = new Map();
  logs.clear();
  memberLoads.clear();
  for (const t of readTimers.values()) clearTimeout(t);
  pendingReads.clear();
  for (const t of guildRefresh.values()) clearTimeout(t);
  clearTimeout(statesTimer);
  statesTimer = undefined;
  resetNotifySettings();
  readTimers = new Map();
  guildRefresh = new Map();
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
