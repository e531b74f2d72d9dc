/**
 * Tables of the events area (D31, D34–D36; issue 15's event log).
 *
 * `event_log` holds each event once: its data serialized once (the webhook body and the
 * gateway's `d` are built from these exact bytes) and its recipient bots (D34). Its order is the
 * key (xid, pos): on SQLite xid is 0 and pos grows in commit order; on PostgreSQL xid is the
 * writing transaction's id and the log is read only below the horizon under which every
 * transaction has finished (events/log.ts). A session's `s` is not stored per event: it is
 * derived at dispatch from the session's marks (gateway/session-marks.ts). D72: people's events
 * are in it too (with the audience that decides who sees them), so every node reads them from
 * here, with Redis only as the wake-up.
 */
export interface EventLogTable {
  pos: number;
  xid: number;
  type: string;
  data: string;
  /** the recipient_sets row naming its recipient bots */
  recipients: number;
  created_at: number;
  /** D72: the people who may see it (a D51 audience as JSON); null: bots only */
  audience: string | null;
}

/** A set of recipient bots, written once and shared by every event with the same recipients. */
export interface RecipientSetsTable {
  id: number;
  /** SHA-256 (hex) of `bots` */
  hash: string;
  /** `,1,5,9,`: the bot ids, ascending, comma-delimited at both ends */
  bots: string;
}

/** One row (id 1): log rows with a key below (xid, pos) may have been pruned. */
export interface EventLogPrunedTable {
  id: number;
  xid: number;
  pos: number;
}

/** D29: the bot's claim counter; each connection that takes a session gets the next number. */
export interface GatewayClaimsTable {
  bot_id: number;
  n: number;
}

/** D72: a bot's last gateway connection attempt accepted while Redis was unreachable (D28). */
export interface GatewayConnectAttemptsTable {
  bot_id: number;
  /** ms since the epoch, on the accepting node's clock */
  at: number;
}

/** D31: gateway sessions, shared by all nodes so a session resumes anywhere, even after restart. */
export interface GatewaySessionsTable {
  id: string;
  bot_id: number;
  /** the claim number of the connection holding it (D29: a higher number wins) */
  claim_n: number;
  /** JSON: the session's marks (gateway/session-marks.ts), READY first */
  marks: string;
  /** PostgreSQL: READY's transaction snapshot `xmin:xmax:xip,…`; null on SQLite */
  ready_snapshot: string | null;
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
  event_log: EventLogTable;
  event_log_pruned: EventLogPrunedTable;
  recipient_sets: RecipientSetsTable;
  gateway_claims: GatewayClaimsTable;
  gateway_connect_attempts: GatewayConnectAttemptsTable;
  gateway_sessions: GatewaySessionsTable;
}
