import { GATEWAY_CLOSE_RESUMABLE, GatewayClose } from '@parley/protocol';

/**
 * D33: every way a gateway connection ends, in one place — what it means, whether the session
 * stays resumable, and what a client should do. docs/gateway.md prints the same table, and a test
 * checks the `resumable` column against the protocol package's GATEWAY_CLOSE_RESUMABLE.
 */
export const Close = {
  ...GatewayClose,
  /** client only: ends the session (D31) */
  NORMAL: 1000,
  /** client only: ends the session (D31) */
  GOING_AWAY: 1001,
  /** no close frame (dropped TCP, terminated dead peer) */
  ABNORMAL: 1006,
  /** after op 7 RECONNECT, when the node shuts down */
  SERVICE_RESTART: 1012,
} as const;
export type CloseCode = (typeof Close)[keyof typeof Close];

export interface CloseInfo {
  readonly name: string;
  /** does the session survive (resume with ?sessionId&seq within the window) */
  readonly resumable: boolean;
  readonly client: string;
}

export const CLOSE_TABLE: Readonly<Record<CloseCode, CloseInfo>> = {
  4000: { name: 'UNKNOWN_ERROR', resumable: true, client: 'reconnect and resume' },
  4001: { name: 'UNKNOWN_OPCODE', resumable: true, client: 'fix the client; resume' },
  4002: {
    name: 'DECODE_ERROR',
    resumable: true,
    client: 'bad JSON or a frame over 4096 bytes: fix the client; resume',
  },
  4004: {
    name: 'AUTHENTICATION_FAILED',
    resumable: false,
    client: 'the token was reset: stop; get the new token',
  },
  4008: { name: 'RATE_LIMITED', resumable: true, client: 'pause, then resume' },
  4009: {
    name: 'SESSION_TIMED_OUT',
    resumable: true,
    client: 'no heartbeat for 1.5 × interval: resume',
  },
  4010: {
    name: 'SESSION_REPLACED',
    resumable: false,
    client: 'another connection took over: stop, do not reconnect by yourself',
  },
  4011: {
    name: 'TOO_MANY_CONNECTIONS',
    resumable: false,
    client:
      "a person's 17th connection closed this, their oldest (D70): stop, do not reconnect by yourself",
  },
  1000: { name: 'NORMAL (client)', resumable: false, client: 'the client ended its session' },
  1001: { name: 'GOING_AWAY (client)', resumable: false, client: 'the client ended its session' },
  1006: {
    name: 'ABNORMAL',
    resumable: true,
    client: 'connection lost (or the server found the peer dead): resume',
  },
  1012: {
    name: 'SERVICE_RESTART',
    resumable: true,
    client: 'sent after op 7 RECONNECT: reconnect (to any node) and resume',
  },
};

/** Whether the session stays resumable after a close with `code` (unlisted codes: yes, D31). */
export const keepsSession = (code: number): boolean =>
  (CLOSE_TABLE as Record<number, CloseInfo | undefined>)[code]?.resumable ?? true;

/** The protocol's table, for the consistency test. */
export const PROTOCOL_RESUMABLE = GATEWAY_CLOSE_RESUMABLE;
