import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { GatewayOp, type PersonReady } from '@parley/protocol';
import type { RateSpec } from '../config/config.js';
import type { Domain } from '../domain/context.js';
import { guildView } from '../domain/guilds/guild-view.js';
import { dmsOf } from '../domain/me/me.service.js';
import { readStatesOf } from '../domain/notifications/mention-marks.js';
import { avatarUrl } from '../domain/views.js';
import { Close, keepsSession } from './close-codes.js';
import { INVALID_SESSION_FRAME, RECONNECT_FRAME } from './frames.js';
import type { PeopleHub, PersonSession, SessionSink } from './people-hub.js';
import { SocketLink } from './socket-link.js';

/**
 * D70: a person's socket holding more than this many bytes its client has not read closes with
 * 4000 (READY, which may be larger, does not count while unsent). Beyond the kernel's own socket
 * buffers, this is the most a non-reading client can make the server hold for its socket.
 */
export const MAX_UNSENT_BYTES = 4 * 1024 * 1024;

export interface PersonConnectionDeps {
  readonly domain: Domain;
  readonly hub: PeopleHub;
  readonly heartbeatMs: number;
  readonly resumeWindowS: number;
  readonly rate: RateSpec | null;
  /** D66: told when this connection becomes visible or hidden (op 3), and when a visible one closes */
  readonly visibility?: { show(userId: number): void; hide(userId: number): void };
  /** D66: who is online (READY's presences); absent: none listed */
  readonly presence?: ReadyPresence;
  /** the connection has closed and its session is settled */
  finished(conn: PersonConnection): void;
  log(err: unknown, msg: string): void;
}

export interface PersonIdentity {
  readonly userId: number;
  /** D47: SHA-256 of the session token it connected with */
  readonly tokenHash: string;
}

/**
 * A person's gateway connection (D51). The same HELLO, heartbeats, frame limits and close codes
 * as a bot's (SocketLink); then READY `{sessionId, user, guilds, readStates, resumeWindowS}` and
 * the dispatches the node's PeopleHub gives its session. A person may hold several of these
 * (tabs, devices): each has its own session and `s`, and none replaces another (no 4010); past
 * 16 on a node the oldest closes with 4011 (D70, people-gateway.ts). A client that stops reading
 * is closed with 4000 once MAX_UNSENT_BYTES wait for it (D70).
 *
 *   handshake ──fresh READY / resumed──▶ live ──▶ closed
 *
 * Resume (D51 "like a bot's while the server can replay it"): the session lives in this node's
 * memory for the resume window after its socket drops, still receiving into its replay buffer;
 * `?sessionId&seq` on the same node replays and sends RESUMED. Anything else — another node, a
 * restart, more missed than the buffer holds, a session another socket holds — is op 9 and a
 * fresh READY, after which the app refetches with `after=` cursors.
 */
export class PersonConnection implements SessionSink {
  private readonly link: SocketLink;
  session: PersonSession | undefined;
  private closedState = false;
  /** D66: the client said it is visible (op 3) and has not said otherwise since */
  private visible = false;
  private markDone: () => void = () => {};
  private readonly done = new Promise<void>((resolve) => {
    this.markDone = resolve;
  });

  constructor(
    ws: WebSocket,
    readonly person: PersonIdentity,
    private readonly deps: PersonConnectionDeps,
    private readonly resume: { sessionId: string; seq: number } | undefined,
    socket?: Duplex,
  ) {
    this.link = new SocketLink(ws, socket, {
      heartbeatMs: deps.heartbeatMs,
      rate: deps.rate,
      clock: deps.domain.clock,
      maxUnsentBytes: MAX_UNSENT_BYTES,
      closing: (code) => {
        this.closedState = true;
        // A close that ends the session (4011, 4004) ends it now, not when the peer answers:
        // the person's next session must find the room free (D70).
        const s = this.session;
        if (s && s.sink === this && !keepsSession(code)) this.deps.hub.end(s);
      },
      closed: (code) => this.onSocketClose(code),
      visibility: (v) => this.setVisible(v),
    });
  }

  get userId(): number {
    return this.person.userId;
  }

  get isClosed(): boolean {
    return this.closedState;
  }

  whenDone(): Promise<void> {
    return this.done;
  }

  start(): void {
    this.link.start();
    if (this.resume && this.tryResume(this.resume)) return;
    if (this.resume) this.link.send(INVALID_SESSION_FRAME);
    this.establish().catch((err: unknown) => {
      this.deps.log(err, "people's gateway session could not be established");
      this.close(Close.UNKNOWN_ERROR, 'internal error');
    });
  }

  /** D31 on this node's memory: replay after `seq`, then RESUMED, then live. */
  private tryResume(r: { sessionId: string; seq: number }): boolean {
    const hub = this.deps.hub;
    const s = hub.sessions.get(r.sessionId);
    if (!s || s.ended || s.userId !== this.userId || s.sink !== undefined) return false;
    if (s.holds > 0 && s.seq === 0) return false; // its READY never went out
    if (!s.canReplayFrom(r.seq)) return false;
    clearTimeout(s.expiry);
    s.expiry = undefined;
    this.session = s;
    s.sink = this;
    // The replay: every dispatch after the client's `seq`, in one write, then RESUMED.
    s.sent = r.seq;
    hub.marker(s, (seq, replayed) =>
      JSON.stringify({
        op: GatewayOp.DISPATCH,
        t: 'RESUMED',
        s: seq,
        d: { sessionId: s.id, replayed },
      }),
    );
    return true;
  }

  private async establish(): Promise<void> {
    const { domain: d, hub } = this.deps;
    const session = hub.open(this.userId, this.person.tokenHash);
    this.session = session;
    if (this.closedState) {
      hub.end(session);
      return;
    }
    let ready: PersonReady;
    try {
      ready = await buildReady(
        d,
        this.userId,
        session.id,
        this.deps.resumeWindowS,
        this.deps.presence,
      );
    } catch (err) {
      hub.end(session);
      throw err;
    }
    if (this.closedState || session.ended) {
      hub.end(session);
      return;
    }
    session.seq = 1;
    session.sent = 1;
    session.sink = this;
    // D31: READY is s = 1.
    this.link.send(JSON.stringify({ op: GatewayOp.DISPATCH, t: 'READY', s: 1, d: ready }), true);
    hub.started(
      session,
      new Map(ready.guilds.map((g) => [g.id, new Set(g.channels.map((c) => c.id))])),
    );
  }

  // SessionSink

  send(frame: string): void {
    this.link.send(frame);
  }

  sendFrame(frame: Buffer, immutable?: boolean): boolean {
    return this.link.sendFrame(frame, immutable);
  }

  close(code: number, reason: string): void {
    this.link.close(code, reason);
  }

  /** Node shutdown: op 7, then close (the app reconnects to any node: op 9 there, fresh READY). */
  reconnect(): void {
    if (this.closedState) return;
    if (this.session?.sink === this) this.deps.hub.flush(this.session);
    this.link.send(RECONNECT_FRAME);
    this.close(Close.SERVICE_RESTART, 'server restarting');
  }

  /** the close code the connection ended with (ours, or the client's) */
  endCode: number | undefined;

  /** D70: bytes queued for the client and not yet sent (metrics) */
  get unsentBytes(): number {
    return this.link.bufferedAmount;
  }

  /** D66: op 3. A connection counts as visible from the client's saying so until it closes. */
  private setVisible(v: boolean): void {
    if (v === this.visible || this.closedState) return;
    this.visible = v;
    if (v) this.deps.visibility?.show(this.userId);
    else this.deps.visibility?.hide(this.userId);
  }

  private onSocketClose(code: number): void {
    this.closedState = true;
    if (this.visible) {
      this.visible = false;
      this.deps.visibility?.hide(this.userId);
    }
    this.endCode = code;
    const s = this.session;
    if (s && s.sink === this) {
      s.sink = undefined;
      if (keepsSession(code) && !s.ended && s.seq > 0) {
        // D31: resumable for the window, still collecting what it would have been sent.
        s.sentAtDetach = s.seq;
        s.expiry = setTimeout(() => this.deps.hub.end(s), this.deps.resumeWindowS * 1000);
        s.expiry.unref();
      } else {
        this.deps.hub.end(s);
      }
    }
    this.deps.finished(this);
    this.markDone();
  }
}

/** D66: what READY asks of the presence tracker (gateway/presence.ts). */
export interface ReadyPresence {
  watchedBy(userId: number): Promise<number[]>;
  onlineAmong(users: readonly number[]): Promise<Set<number>>;
}

/**
 * D51 READY: the user, every guild as GET /app/v1/guilds/:guildId shows it (D66: each channel
 * with its `lastMessageId` once it has a message), read states with `mentionCount`, and D66's
 * `presences` (the online among those sharing a guild or a DM) and `dms` (with `lastMessageId`).
 * No history is scanned: a channel's newest message is one index probe, mention counts are the
 * person's own unread marks (domain/notifications/mention-marks.ts).
 */
export async function buildReady(
  d: Domain,
  userId: number,
  sessionId: string,
  resumeWindowS: number,
  presence?: ReadyPresence,
): Promise<PersonReady> {
  const [user, memberships, reads, dms, presences] = await Promise.all([
    d.db
      .selectFrom('users')
      .select(['id', 'name', 'avatar'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow(),
    d.db
      .selectFrom('members')
      .select('guild_id')
      .where('user_id', '=', userId)
      .orderBy('guild_id', 'asc')
      .execute(),
    readStatesOf(d.db, userId),
    dmsOf(d, userId),
    onlinePresences(userId, presence),
  ]);
  const guilds = [];
  for (const m of memberships) {
    const g = await guildView(d.db, Number(m.guild_id), userId);
    if (g) guilds.push(g);
  }
  const last = await lastMessageIds(
    d,
    guilds.flatMap((g) => g.channels.map((c) => c.id)),
  );
  for (const g of guilds)
    g.channels = g.channels.map((c) => {
      const id = last.get(c.id);
      return id === undefined ? c : { ...c, lastMessageId: id };
    });
  return {
    sessionId,
    user: {
      id: Number(user.id),
      name: user.name,
      avatar: avatarUrl(d.urls, user.avatar),
      isBot: false,
    },
    guilds,
    readStates: reads,
    resumeWindowS,
    presences,
    dms: dms.dms,
  };
}

async function onlinePresences(
  userId: number,
  presence: ReadyPresence | undefined,
): Promise<PersonReady['presences']> {
  if (!presence) return [];
  const online = await presence.onlineAmong(await presence.watchedBy(userId));
  return [...online].sort((a, b) => a - b).map((id) => ({ userId: id, status: 'online' }));
}

/**
 * D66: each channel's newest message id — one probe of the (channel_id, id) index per channel
 * (a correlated max that both databases answer from the index's end).
 */
async function lastMessageIds(d: Domain, channelIds: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (let i = 0; i < channelIds.length; i += 500) {
    const rows = await d.db
      .selectFrom('channels as c')
      .select((eb) => [
        'c.id',
        eb
          .selectFrom('messages as m')
          .select((e) => e.fn.max('m.id').as('max'))
          .whereRef('m.channel_id', '=', 'c.id')
          .as('last'),
      ])
      .where('c.id', 'in', channelIds.slice(i, i + 500))
      .execute();
    for (const r of rows) if (r.last != null) out.set(Number(r.id), Number(r.last));
  }
  return out;
}
