/**
 * Tables of the events area (D34–D36, D31).
 *
 * `events` holds each event once, its data serialized once (the webhook body and the gateway's
 * `d` are built from these exact bytes). `bot_events` is the per-bot stream: one row per
 * (recipient bot, event), numbered by a per-bot sequence that is allocated under a row lock in
 * the writing transaction, so each bot's stream is gapless and grows only by committed rows in
 * commit order — a reader that sees seq n has seen everything below n. The gateway also puts
 * its READY / RESUMED markers in that stream, so a session's `s` is just an offset into it.
 */
export interface EventsTable {
  /** snowflake */
  id: number;
  /** one of the eight event types */
  type: string;
  /** JSON text of the envelope's `data` */
  data: string;
  created_at: number;
}

/** The per-bot sequence counter: its row is the lock that orders a bot's stream. */
export interface EventStreamsTable {
  bot_id: number;
  /** last allocated position (positions start at 1) */
  seq: number;
}

export interface BotEventsTable {
  bot_id: number;
  seq: number;
  /** 0 event, 1 gateway READY marker, 2 gateway RESUMED marker (events/stream.ts EntryKind) */
  kind: number;
  /** the event (null for markers) */
  event_id: number | null;
  created_at: number;
}

/** D31: gateway sessions, shared by all nodes so a session resumes anywhere, even after restart. */
export interface GatewaySessionsTable {
  id: string;
  bot_id: number;
  /** position of the session's READY marker in the bot's stream: s = seq − ready_seq + 1 */
  ready_seq: number;
  /** the connection that currently holds the session (random per connection) */
  conn_id: string;
  /** PARLEY_NODE_ID of the node holding that connection */
  node_id: number;
  /** 1 while a connection holds it */
  connected: number;
  /** when its connection dropped (resumable until + the resume window) */
  disconnected_at: number | null;
  /** 1 = not resumable any more (client closed 1000/1001, replaced, token reset) */
  ended: number;
  created_at: number;
}

export interface EventsTables {
  events: EventsTable;
  event_streams: EventStreamsTable;
  bot_events: BotEventsTable;
  gateway_sessions: GatewaySessionsTable;
}
