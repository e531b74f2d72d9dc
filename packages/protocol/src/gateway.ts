import type { Bot, BotUser } from './rest.js';

/** D30: gateway opcodes. */
export const GatewayOp = {
  DISPATCH: 0,
  HEARTBEAT: 1,
  /**
   * D66 (added to D30/D51, people only): the client says whether the person can see it,
   * `{op: 3, d: {visible: boolean}}`; a person with a visible tab anywhere gets no Web Push.
   * A bot sending it is closed with 4001 as before.
   */
  VISIBILITY: 3,
  RECONNECT: 7,
  INVALID_SESSION: 9,
  HELLO: 10,
  HEARTBEAT_ACK: 11,
} as const;

/** D33: close codes, and whether a client should resume after each. */
export const GatewayClose = {
  UNKNOWN_ERROR: 4000,
  UNKNOWN_OPCODE: 4001,
  DECODE_ERROR: 4002,
  AUTHENTICATION_FAILED: 4004,
  RATE_LIMITED: 4008,
  SESSION_TIMED_OUT: 4009,
  SESSION_REPLACED: 4010,
  /** D70: a person's 17th connection closes their oldest (people only; added to D33) */
  TOO_MANY_CONNECTIONS: 4011,
} as const;
export type GatewayCloseCode = (typeof GatewayClose)[keyof typeof GatewayClose];

export const GATEWAY_CLOSE_RESUMABLE: Record<GatewayCloseCode, boolean> = {
  4000: true,
  4001: true,
  4002: true,
  4004: false,
  4008: true,
  4009: true,
  4010: false,
  4011: false,
};

/** D30: the largest frame a client may send. */
export const MAX_CLIENT_FRAME_BYTES = 4096;

/** D33: gateway ERROR frame codes. */
export const GATEWAY_ERROR_CODES = ['RATE_LIMIT', 'INVALID_PAYLOAD'] as const;

/** D30: the first frame, `{op:10,d:{heartbeatInterval}}`. */
export interface HelloData {
  heartbeatInterval: number;
}

/** D31: the READY dispatch a bot receives after HELLO (no identify step). */
export interface ReadyData {
  sessionId: string;
  bot: Bot;
  user: BotUser;
  guilds: Array<{ id: number }>;
  resumeWindowS: number;
}

/** D32/D33: the ERROR dispatch (no `s`). */
export interface GatewayErrorData {
  code: (typeof GATEWAY_ERROR_CODES)[number] | (string & {});
  message: string;
}
