import { randomBytes } from 'node:crypto';
import type { PeopleAudience, PeopleDispatch } from '../domain/events/recorder.js';
import { guildAccess } from '../domain/guilds/guild-access.js';
import type { Db } from '../storage/db.js';
import { frameInto, frameLength, frameOf, frameParts, type FrameParts } from './frame-template.js';

/**
 * D51 fan-out of people's events on one node (docs/architecture.md#habit-10: one event, many sockets).
 * Each event arrives once (events.onPeople: committed here, or on another node via Redis) and is
 * serialized once. Reaching a person is a walk of memory and nothing is stored per recipient but
 * a reference: a channel's event walks the channel → sessions index (D34's VIEW rule applied in
 * advance), and each session takes the next `s` and a reference in its replay buffer. No
 * database work happens per recipient: a change of who sees what (GUILD_CREATE, CHANNEL_*,
 * roles, member updates) re-reads the guild ONCE for all sessions it affects on this node
 * (domain/guilds/guild-access.ts).
 *
 * Writing is separate from deciding. A session with news joins the writer's queue; the writer
 * (flushQueued) gives each queued session ONE socket write with every frame it has not sent yet,
 * read back from its replay buffer. A socket write is the expensive step of a big fan-out (a
 * system call, and on loopback the receiver's TCP too), so under load the writes per socket stay
 * bounded while each carries more frames — the batching adapts to the lag by itself, with no
 * timer. A frame is the event's bytes with only `s` differing: built once per event and width of
 * `s` as a template, copied and patched per session, or shared whole by the sessions at the same
 * `s` (sharedFrame).
 *
 * A session is the unit of fan-out, not its socket: a session whose socket dropped keeps
 * receiving into its replay buffer for the resume window (D31/D51: it resumes like a bot's while
 * the server can replay it); a resume is the same write, from the client's `seq`.
 */

/** D51: dispatches kept per session for a resume; more missed than this → op 9 + fresh READY. */
export const REPLAY_MAX = 512;
/**
 * D70: and at most this many bytes of frames per session (the newest dispatch is always kept):
 * 512 large frames (a guild with its channels) would otherwise hold hundreds of MiB per session.
 */
export const REPLAY_MAX_BYTES = 1024 * 1024;
/**
 * D70: a person's sessions on a node, connected or waiting to be resumed. Without it a client
 * dropping and reopening connections would leave one resumable session (and its replay buffer)
 * behind per reconnect for the whole resume window; with it a person costs a node at most 16
 * sessions of REPLAY_MAX_BYTES, each with at most MAX_UNSENT_BYTES queued (person-connection.ts).
 */
export const MAX_SESSIONS_PER_PERSON = 16;
let sessionsOpened = 0;

/** An event ready to send: `{"op":0,"t":…,"s":` + s + `,"d":…}` with only `s` per session. */
/** A people's event ready for fan-out: its frame parts (frame-template.ts) and who it concerns. */
export interface PreparedEvent extends FrameParts {
  readonly type: string;
  readonly audience: PeopleAudience;
  /** the user a member event is about (GUILD_MEMBER_ADD/REMOVE/UPDATE) */
  readonly subject: number | undefined;
  /** the guild a structural event changes */
  readonly guildId: number | undefined;
  /** the last frame built whole (sharedFrame), for the next session at the same `s` */
  shared: Buffer | undefined;
  sharedS: number;
  /** its number in the hub's EventTable (0 until a session takes it) */
  no: number;
  /** how many replay-buffer slots refer to it (EventTable) */
  refs: number;
  /** its frame's size in bytes (header and `s` counted at their widest), for D70's bound */
  readonly bytes: number;
}

/**
 * The events that sessions' replay buffers refer to, by number. A buffer holds numbers in a
 * typed array, not references: at 10,000 sessions an event stored as a reference in every
 * buffer made 10,000 old-to-new pointers for the young-generation collector to visit (and a
 * write barrier each) — the largest cost of the fan-out after the socket writes themselves. An
 * event stays here while any slot refers to it (counted per slot, no barrier: a small integer).
 */
export class EventTable {
  private next = 1;
  /** bytes of the frames of the events held, each counted once (metrics) */
  bytes = 0;
  private readonly byNo = new Map<number, PreparedEvent>();
  /** the event released last: sessions that got the same events evict the same one in turn */
  private last: PreparedEvent | undefined;

  /** One more slot refers to `e`; returns its number. */
  ref(e: PreparedEvent): number {
    if (e.refs++ === 0) {
      if (e.no === 0) e.no = this.next++;
      this.byNo.set(e.no, e);
      this.bytes += e.bytes;
    }
    return e.no;
  }

  get(no: number): PreparedEvent | undefined {
    const last = this.last;
    return last !== undefined && last.no === no ? last : this.byNo.get(no);
  }

  /** A slot no longer refers to event `no`. */
  release(no: number): void {
    const e = this.get(no);
    if (!e) return;
    this.last = e;
    if (--e.refs === 0) {
      this.byNo.delete(no);
      this.bytes -= e.bytes;
      this.last = undefined;
    }
  }

  /** events some replay buffer still refers to (tests, metrics) */
  get size(): number {
    return this.byNo.size;
  }
}

/** Types after which a session's view of a guild is re-read (D51; guildadmin emits these). */
const REFRESHING = new Set([
  'CHANNEL_CREATE',
  'CHANNEL_UPDATE',
  'CHANNEL_DELETE',
  'GUILD_ROLES_UPDATE',
]);
// D70: GUILD_UPDATE carries the guild's own fields only: a rename changes no one's view (a
// change of what a member sees comes with CHANNEL_CREATE / CHANNEL_DELETE to that member).

export function prepare(e: PeopleDispatch): PreparedEvent {
  let subject: number | undefined;
  let guildId: number | undefined;
  // Parsed once per event, only for the types that change who sees what (never per recipient).
  switch (e.type) {
    case 'GUILD_CREATE':
    case 'GUILD_UPDATE':
    case 'GUILD_DELETE':
      guildId = numberField(e.data, 'id');
      break;
    case 'GUILD_MEMBER_ADD':
    case 'GUILD_MEMBER_REMOVE':
    case 'GUILD_MEMBER_UPDATE': {
      const d = parse(e.data);
      guildId = num(d?.['guildId']);
      const user = d?.['user'] as Record<string, unknown> | undefined;
      subject = num(user?.['id']);
      break;
    }
    case 'CHANNEL_CREATE':
    case 'CHANNEL_UPDATE':
    case 'CHANNEL_DELETE':
    case 'GUILD_ROLES_UPDATE':
      guildId = numberField(e.data, 'guildId');
      break;
  }
  const parts = frameParts(e.type, e.data);
  return {
    type: e.type,
    audience: e.audience,
    ...parts,
    subject,
    guildId,
    shared: undefined,
    sharedS: 0,
    no: 0,
    refs: 0,
    // a 10-byte WebSocket header and 16 digits of `s` at most
    bytes: parts.prefix.length + parts.suffix.length + 26,
  };
}

const parse = (data: string): Record<string, unknown> | undefined => {
  try {
    const v: unknown = JSON.parse(data);
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const numberField = (data: string, key: string): number | undefined => num(parse(data)?.[key]);

/**
 * The event's frame under `s`, shared by every session that gets it at the same `s` (sessions
 * that joined around the same time and hear the same guild keep equal counters), never changed
 * once built: a socket may keep it as long as it needs.
 */
export function sharedFrame(e: PreparedEvent, s: number): Buffer {
  if (e.sharedS === s && e.shared) return e.shared;
  const f = frameOf(e, s);
  e.shared = f;
  e.sharedS = s;
  return f;
}

/** Where a session's frames go while a connection holds it. */
export interface SessionSink {
  /** a frame of the session's own (READY, RESUMED), as text */
  send(frame: string): void;
  /**
   * Complete WebSocket frames (frameInto), written as they are. `true`: the bytes were taken at
   * once (copied to the kernel, or dropped with a closing socket) and the caller may reuse the
   * buffer; anything else: the buffer is kept until written, and must not change. `immutable`:
   * the caller never changes it (the socket may keep it without a copy).
   */
  sendFrame(frame: Buffer, immutable?: boolean): boolean | void;
  /** the session was ended under the connection (not resumable any more) */
  close(code: number, reason: string): void;
}

export class PersonSession {
  readonly id = randomBytes(16).toString('base64url');
  /** opening order on this node (the oldest goes first past MAX_SESSIONS_PER_PERSON) */
  readonly opened = ++sessionsOpened;
  /** the last `s` given (READY is 1) */
  seq = 0;
  /** the last `s` handed to the sink: dispatches after it wait for the hub's next flush */
  sent = 0;
  /** in the hub's list of sessions to flush */
  queued = false;
  /** guild → channel ids it can VIEW (shared, read-only sets); null while being re-read */
  readonly guilds = new Map<number, ReadonlySet<number> | null>();
  /** > 0: events wait in `held` (READY not sent yet, or a guild being re-read) */
  holds = 1;
  held: PreparedEvent[] = [];
  sink: SessionSink | undefined;
  ended = false;
  /**
   * D31: the replay buffer: the EventTable number of the dispatch of `s` at (s − 2) % REPLAY_MAX
   * (0: a RESUMED marker, or nothing yet). Numbers in a typed array, not references (see
   * EventTable), allocated whole when the session opens: sessions that joined together get the
   * same events, and arrays grown as they fill would all grow at the same event — at 10,000
   * sessions, tens of MiB allocated in one dispatch and a long collection pause mid fan-out.
   */
  private ring: Float64Array = new Float64Array(REPLAY_MAX);
  /** D70: the frame bytes of each slot's dispatch (0 for a marker), and their sum */
  private sizes: Float64Array = new Float64Array(REPLAY_MAX);
  private ringBytes = 0;
  /** the oldest `s` the buffer still holds (READY, s = 1, is never in it) */
  private oldest = 2;
  /** the last `s` a socket was given before it dropped (replay must still reach past it) */
  sentAtDetach = 0;
  expiry: NodeJS.Timeout | undefined;

  constructor(
    readonly userId: number,
    /** SHA-256 of the session token (D47: its end closes the connection with 4004) */
    readonly tokenHash: string,
    /** the hub's events, which the replay buffer refers to by number */
    private readonly events: EventTable,
  ) {}

  /**
   * Store `e` under the next `s`, evicting the oldest dispatches past REPLAY_MAX entries or
   * REPLAY_MAX_BYTES (D70); false when that evicts a dispatch no socket ever got.
   */
  push(e: PreparedEvent | null): boolean {
    // Ended: its buffer is gone (dropReplay), nothing is kept for it any more.
    if (this.ended) return true;
    const s = ++this.seq;
    let kept = true;
    if (s - REPLAY_MAX >= this.oldest) kept = this.evictOldest();
    const slot = (s - 2) % REPLAY_MAX;
    const bytes = e ? e.bytes : 0;
    this.ring[slot] = e ? this.events.ref(e) : 0;
    this.sizes[slot] = bytes;
    this.ringBytes += bytes;
    while (this.ringBytes > REPLAY_MAX_BYTES && this.oldest < s) kept = this.evictOldest() && kept;
    return kept;
  }

  /** The oldest entry leaves; false when no socket was ever given it (its client missed it). */
  private evictOldest(): boolean {
    const gone = this.oldest++;
    const slot = (gone - 2) % REPLAY_MAX;
    const no = this.ring[slot] as number;
    this.ringBytes -= this.sizes[slot] as number;
    this.ring[slot] = 0;
    this.sizes[slot] = 0;
    if (no) this.events.release(no);
    return this.sink !== undefined || gone <= this.sentAtDetach;
  }

  /**
   * The newest `s` that storing one more dispatch of `bytes` would evict (below `oldest`: none).
   * The hub writes the dispatches a socket has not had yet before they would be evicted.
   */
  evictsThrough(bytes: number): number {
    const s = this.seq + 1;
    let p = this.oldest;
    let total = this.ringBytes + bytes;
    for (; p < s && (s - p >= REPLAY_MAX || total > REPLAY_MAX_BYTES); p++)
      total -= this.sizes[(p - 2) % REPLAY_MAX] as number;
    return p - 1;
  }

  /** D31: every dispatch after `seq` is still here (and `seq` is one this session reached). */
  canReplayFrom(seq: number): boolean {
    return seq >= 1 && seq <= this.seq && seq + 1 >= this.oldest;
  }

  /** The dispatch stored under `s`, if the buffer still holds it (null: a marker). */
  entry(s: number): PreparedEvent | null {
    if (s < this.oldest) return null;
    const no = this.ring[(s - 2) % REPLAY_MAX] as number;
    return no === 0 ? null : (this.events.get(no) ?? null);
  }

  /** The frames after `seq`, with their original `s` (markers skipped). */
  replayFrom(seq: number): Buffer[] {
    const out: Buffer[] = [];
    for (let s = seq + 1; s <= this.seq; s++) {
      const e = this.entry(s);
      if (e) out.push(frameOf(e, s));
    }
    return out;
  }

  /** D70: bytes of the frames the buffer holds (tests) */
  get replayBytes(): number {
    return this.ringBytes;
  }

  /** Ended: the buffer's events are released (the table keeps only what some buffer holds). */
  dropReplay(): void {
    for (const no of this.ring) if (no !== 0) this.events.release(no);
    this.ring = new Float64Array(0);
    this.sizes = new Float64Array(0);
    this.ringBytes = 0;
  }
}

export interface HubDeps {
  readonly db: Db;
  log(err: unknown, msg: string): void;
}

/**
 * Where a session's frames are assembled when several wait (reused while each write is taken at
 * once; at most this much per write). A write a slow socket keeps holds on to one of these until
 * that socket drains.
 */
const SCRATCH_BYTES = 64 * 1024;
/** The writer yields to the loop after this long (see flushQueued). */
const FLUSH_SLICE_MS = 5;

export class PeopleHub {
  readonly sessions = new Map<string, PersonSession>();
  /** the events sessions' replay buffers refer to */
  readonly events = new EventTable();
  /** sessions with dispatches after `sent`, in the order they got them; written once per turn */
  private queue: PersonSession[] = [];
  /** where the writer stands in `queue` (the sessions before it are written) */
  private queueHead = 0;
  private flushScheduled = false;
  private scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  private readonly byGuild = new Map<number, Set<PersonSession>>();
  /** channel → sessions whose view has it: a channel's event reaches exactly these */
  private readonly byChannel = new Map<number, Set<PersonSession>>();
  /** indexed sessions holding their events while a guild view is re-read */
  private readonly holding = new Set<PersonSession>();
  private readonly byUser = new Map<number, Set<PersonSession>>();
  /** sessions whose READY is being built: they hold every event, filtered once READY is out */
  private readonly starting = new Set<PersonSession>();
  /** guild → sessions to re-read, flushed once per turn of the loop */
  private readonly toRefresh = new Map<number, Set<PersonSession>>();
  private refreshScheduled = false;

  constructor(private readonly deps: HubDeps) {}

  /** A fresh session, holding events until `started` (its READY goes out first). */
  open(userId: number, tokenHash: string): PersonSession {
    // D70: room for this one: the person's oldest sessions waiting for a resume end first
    // (connections beyond the bound were closed with 4011 already, people-gateway.ts).
    const mine = this.sessionsOf(userId);
    if (mine.length >= MAX_SESSIONS_PER_PERSON) {
      const waiting = mine
        .filter((x) => x.sink === undefined && !this.starting.has(x))
        .sort((a, b) => a.opened - b.opened);
      for (const x of waiting.slice(0, mine.length - MAX_SESSIONS_PER_PERSON + 1)) this.end(x);
    }
    const s = new PersonSession(userId, tokenHash, this.events);
    this.sessions.set(s.id, s);
    // Not in the indexes yet: until READY it takes every event from `starting` (filtered then).
    this.starting.add(s);
    return s;
  }

  /** READY was sent (s = 1) with these guilds and VIEW sets: deliver what waited meanwhile. */
  started(s: PersonSession, guilds: ReadonlyMap<number, ReadonlySet<number>>): void {
    this.starting.delete(s);
    if (s.ended) return;
    let set = this.byUser.get(s.userId);
    if (!set) this.byUser.set(s.userId, (set = new Set()));
    set.add(s);
    for (const [g, visible] of guilds) this.setGuild(s, g, visible);
    this.release(s);
  }

  /** Not resumable any more: out of every index, buffer dropped. */
  end(s: PersonSession): void {
    if (s.ended) return;
    // What it was given goes out before the close frame.
    if (s.sink) this.flush(s);
    s.ended = true;
    clearTimeout(s.expiry);
    this.sessions.delete(s.id);
    this.starting.delete(s);
    this.holding.delete(s);
    for (const view of s.guilds.values()) this.unindex(s, view);
    for (const g of s.guilds.keys()) this.byGuild.get(g)?.delete(s);
    for (const g of s.guilds.keys()) if (this.byGuild.get(g)?.size === 0) this.byGuild.delete(g);
    s.guilds.clear();
    const set = this.byUser.get(s.userId);
    set?.delete(s);
    if (set?.size === 0) this.byUser.delete(s.userId);
    s.held = [];
    s.dropReplay();
    const sink = s.sink;
    s.sink = undefined;
    sink?.close(4000, 'session ended');
  }

  /** The user's sessions on this node (those still starting included). */
  sessionsOf(userId: number): PersonSession[] {
    const out = [...(this.byUser.get(userId) ?? [])];
    for (const s of this.starting) if (s.userId === userId) out.push(s);
    return out;
  }

  get size(): number {
    return this.sessions.size;
  }

  // Fan-out

  dispatch(raw: PeopleDispatch): void {
    if (this.sessions.size === 0) return;
    const e = prepare(raw);
    for (const s of this.starting) s.held.push(e);
    const a = e.audience;
    switch (a.kind) {
      case 'channel': {
        if (e.guildId !== undefined) {
          // A structural event (it changes views): every session of the guild, one by one.
          const set = this.byGuild.get(a.guildId);
          if (set) for (const s of set) this.offer(s, e);
          break;
        }
        // Sessions re-reading a view hold all of the guild's events (filtered by the new view).
        for (const s of this.holding) if (s.guilds.has(a.guildId)) s.held.push(e);
        // The rest: the index says who sees the channel (D34's VIEW rule, applied in advance).
        const set = this.byChannel.get(a.channelId);
        if (set) for (const s of set) if (s.holds === 0) this.emit(s, e);
        break;
      }
      case 'guild': {
        const set = this.byGuild.get(a.guildId);
        const also = a.alsoUserIds ?? [];
        // A person who joins hears their own GUILD_MEMBER_ADD, and their view of it starts.
        const joining = e.type === 'GUILD_MEMBER_ADD' ? e.subject : undefined;
        if (also.length === 0 && joining === undefined) {
          if (set) for (const s of set) this.offer(s, e);
          break;
        }
        // Targets first: processing one may change the indexes (a member's own removal).
        const targets = new Set(set);
        for (const u of joining === undefined ? also : [...also, joining])
          for (const s of this.byUser.get(u) ?? []) targets.add(s);
        for (const s of targets) this.offer(s, e);
        break;
      }
      case 'users': {
        const targets = new Set<PersonSession>();
        for (const u of a.userIds) for (const s of this.byUser.get(u) ?? []) targets.add(s);
        for (const s of targets) this.offer(s, e);
        break;
      }
    }
  }

  private offer(s: PersonSession, e: PreparedEvent): void {
    if (s.holds > 0) s.held.push(e);
    else this.process(s, e);
  }

  /** Decide with the session's current view, send, then apply what the event changes. */
  private process(s: PersonSession, e: PreparedEvent): void {
    if (s.ended) return;
    if (this.concerns(s, e)) this.emit(s, e);
    if (s.ended) return;
    const g = e.guildId;
    if (g === undefined) return;
    const self = e.subject === s.userId;
    switch (e.type) {
      case 'GUILD_CREATE':
        this.refresh(s, g, true);
        break;
      case 'GUILD_MEMBER_ADD':
        if (self) this.refresh(s, g, true);
        break;
      case 'GUILD_DELETE':
        this.dropGuild(s, g);
        break;
      case 'GUILD_MEMBER_REMOVE':
        if (self) this.dropGuild(s, g);
        break;
      case 'GUILD_MEMBER_UPDATE':
        if (self && s.guilds.has(g)) this.refresh(s, g, false);
        break;
      default:
        if (REFRESHING.has(e.type) && s.guilds.has(g)) this.refresh(s, g, false);
    }
  }

  /** D34 rules applied to a person. */
  private concerns(s: PersonSession, e: PreparedEvent): boolean {
    const a = e.audience;
    switch (a.kind) {
      case 'channel':
        return s.guilds.get(a.guildId)?.has(a.channelId) === true;
      case 'guild':
        return (
          s.guilds.has(a.guildId) ||
          (a.alsoUserIds?.includes(s.userId) ?? false) ||
          (e.type === 'GUILD_MEMBER_ADD' && e.subject === s.userId)
        );
      case 'users':
        return a.userIds.includes(s.userId);
    }
  }

  private emit(s: PersonSession, e: PreparedEvent): void {
    // The buffer must still hold every dispatch not yet written: write them first if not.
    if (s.sink && s.evictsThrough(e.bytes) > s.sent) this.flush(s);
    if (!s.push(e)) {
      // Dropped, and its client missed more than the buffer holds: it cannot resume (op 9).
      this.end(s);
      return;
    }
    if (s.sink && !s.queued) {
      s.queued = true;
      this.queue.push(s);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flushQueued);
      }
    }
  }

  /**
   * The writer: sessions with news, in the order they got it, each given ONE write holding all
   * its frames since the last. It runs after the loop's I/O (every event committed in the turn is
   * in) and in slices of FLUSH_SLICE_MS, letting the loop take requests, commits and heartbeats
   * between slices. An event that arrives while a sweep is under way joins the write of every
   * session still waiting in it, so under load the writes per socket (the system calls that
   * dominate a big fan-out) grow slower than the events, and the last socket of a sweep hears of
   * an event one sweep after it, not two.
   */
  private readonly flushQueued = (): void => {
    this.flushScheduled = false;
    const q = this.queue;
    const start = performance.now();
    let i = this.queueHead;
    while (i < q.length) {
      const s = q[i++] as PersonSession;
      s.queued = false;
      this.flush(s);
      if ((i & 63) === 0 && performance.now() - start >= FLUSH_SLICE_MS) break;
    }
    if (i < q.length) {
      // Under steady load the writer never empties the list: drop the written part now and then.
      if (i >= 4096 && i * 2 >= q.length) {
        this.queue = q.slice(i);
        i = 0;
      }
      this.queueHead = i;
      this.flushScheduled = true;
      setImmediate(this.flushQueued);
    } else {
      this.queue = [];
      this.queueHead = 0;
    }
  };

  /**
   * Write the session's dispatches after `sent` now (before a frame of its own, a close, or when
   * the buffer is about to overwrite them). Returns how many frames went out.
   */
  flush(s: PersonSession): number {
    const sink = s.sink;
    let n = s.sent + 1;
    const to = s.seq;
    s.sent = to;
    if (!sink || n > to) return 0;
    if (n === to) {
      // The usual case: one frame, very often the same bytes as the previous session's.
      const e = s.entry(n);
      if (!e) return 0;
      sink.sendFrame(sharedFrame(e, n), true);
      return 1;
    }
    // Several (under load, or a replay): assembled in the scratch, up to its size per write.
    let frames = 0;
    let at = 0;
    for (; n <= to; n++) {
      const e = s.entry(n);
      if (!e) continue;
      frames++;
      const len = frameLength(e, n);
      if (at + len > SCRATCH_BYTES) {
        if (at > 0) this.write(sink, at);
        at = 0;
        if (len > SCRATCH_BYTES) {
          sink.sendFrame(frameOf(e, n), true);
          continue;
        }
      }
      at = frameInto(e, n, this.scratch, at);
    }
    if (at > 0) this.write(sink, at);
    return frames;
  }

  private write(sink: SessionSink, bytes: number): void {
    const taken = sink.sendFrame(this.scratch.subarray(0, bytes));
    // Kept by the socket (a slow reader): the scratch is its now.
    if (taken !== true) this.scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  }

  /**
   * A frame of the session's own (RESUMED) under the next `s`, after every dispatch before it (a
   * resume's replay: `sent` is where the client stands), kept in the buffer as a marker.
   */
  marker(s: PersonSession, build: (seq: number, written: number) => string): void {
    const written = this.flush(s);
    s.push(null);
    s.sent = s.seq;
    s.sink?.send(build(s.seq, written));
  }

  // Views of guilds

  private setGuild(s: PersonSession, g: number, visible: ReadonlySet<number> | null): void {
    this.unindex(s, s.guilds.get(g));
    s.guilds.set(g, visible);
    if (visible)
      for (const c of visible) {
        let set = this.byChannel.get(c);
        if (!set) this.byChannel.set(c, (set = new Set()));
        set.add(s);
      }
    let set = this.byGuild.get(g);
    if (!set) this.byGuild.set(g, (set = new Set()));
    set.add(s);
  }

  private unindex(s: PersonSession, view: ReadonlySet<number> | null | undefined): void {
    if (!view) return;
    for (const c of view) {
      const set = this.byChannel.get(c);
      set?.delete(s);
      if (set?.size === 0) this.byChannel.delete(c);
    }
  }

  private dropGuild(s: PersonSession, g: number): void {
    if (!s.guilds.has(g)) return;
    this.unindex(s, s.guilds.get(g));
    s.guilds.delete(g);
    const set = this.byGuild.get(g);
    set?.delete(s);
    if (set?.size === 0) this.byGuild.delete(g);
  }

  /** Re-read what `s` sees of guild `g`; its events wait meanwhile (order kept). */
  private refresh(s: PersonSession, g: number, joining: boolean): void {
    if (joining && !s.guilds.has(g)) this.setGuild(s, g, null);
    s.holds++;
    if (!this.starting.has(s)) this.holding.add(s);
    let set = this.toRefresh.get(g);
    if (!set) this.toRefresh.set(g, (set = new Set()));
    set.add(s);
    if (!this.refreshScheduled) {
      this.refreshScheduled = true;
      setImmediate(() => this.flushRefresh());
    }
  }

  private flushRefresh(): void {
    this.refreshScheduled = false;
    const batches = [...this.toRefresh];
    this.toRefresh.clear();
    for (const [g, set] of batches) void this.refreshGuild(g, [...set]);
  }

  private async refreshGuild(g: number, sessions: PersonSession[]): Promise<void> {
    let views: Map<number, Set<number>>;
    try {
      views = await guildAccess(this.deps.db, g, [...new Set(sessions.map((s) => s.userId))]);
    } catch (err) {
      // Without its view a session cannot be served correctly: it ends (the client gets 4000,
      // resumes, and is told op 9 with a fresh READY).
      this.deps.log(err, "people's gateway: a guild view could not be read");
      for (const s of sessions) this.end(s);
      return;
    }
    for (const s of sessions) {
      if (s.ended) continue;
      const visible = views.get(s.userId);
      if (visible) this.setGuild(s, g, visible);
      else this.dropGuild(s, g);
      this.release(s);
    }
  }

  /** Release one hold; at none, process what waited, in order (a refresh may hold again). */
  private release(s: PersonSession): void {
    if (s.holds > 0 && s.holds-- > 1) return;
    s.holds = 0;
    let i = 0;
    const held = s.held;
    while (i < held.length && s.holds === 0 && !s.ended)
      this.process(s, held[i++] as PreparedEvent);
    s.held = i < held.length ? held.slice(i) : [];
    if (s.holds === 0) this.holding.delete(s);
  }
}
