import { GatewayOp, MAX_CLIENT_FRAME_BYTES, type GATEWAY_ERROR_CODES } from '@parley/protocol';
import { Close } from './close-codes.js';

/** D30 frames the server sends. Dispatches of events are built by events/serialize.ts. */
export const helloFrame = (heartbeatInterval: number): string =>
  JSON.stringify({ op: GatewayOp.HELLO, d: { heartbeatInterval } });
export const HEARTBEAT_ACK_FRAME = JSON.stringify({ op: GatewayOp.HEARTBEAT_ACK, d: null });
export const INVALID_SESSION_FRAME = JSON.stringify({ op: GatewayOp.INVALID_SESSION, d: false });
export const RECONNECT_FRAME = JSON.stringify({ op: GatewayOp.RECONNECT, d: null });

/** D32/D33: ERROR frames carry no `s`. */
export const errorFrame = (code: (typeof GATEWAY_ERROR_CODES)[number], message: string): string =>
  JSON.stringify({ op: GatewayOp.DISPATCH, t: 'ERROR', d: { code, message } });

export interface ReadyData {
  sessionId: string;
  bot: unknown;
  user: { id: number; name: string; isBot: boolean };
  guilds: Array<{ id: number }>;
  resumeWindowS: number;
}

/** D31: READY is the session's first dispatch (s = 1). */
export const readyFrame = (d: ReadyData): string =>
  JSON.stringify({ op: GatewayOp.DISPATCH, t: 'READY', s: 1, d });

export const resumedFrame = (s: number, d: { sessionId: string; replayed: number }): string =>
  JSON.stringify({ op: GatewayOp.DISPATCH, t: 'RESUMED', s, d });

/** What the server makes of one client frame. */
export type ClientFrame =
  | { kind: 'heartbeat'; lastSeq: number | null }
  | { kind: 'visibility'; visible: boolean }
  | { kind: 'invalid'; message: string }
  | { kind: 'close'; code: number; reason: string };

/**
 * D30/D32: JSON text of at most 4096 bytes, an object with an integer `op`. Undecodable frames
 * close with 4002, unknown (or server-only) opcodes with 4001; a heartbeat with a malformed `d`
 * is answered with an INVALID_PAYLOAD error and the connection stays.
 */
export function parseClientFrame(data: Buffer, isBinary: boolean, people = false): ClientFrame {
  if (data.length > MAX_CLIENT_FRAME_BYTES)
    return { kind: 'close', code: Close.DECODE_ERROR, reason: 'frame over 4096 bytes' };
  if (isBinary) return { kind: 'close', code: Close.DECODE_ERROR, reason: 'frames are JSON text' };
  let frame: unknown;
  try {
    frame = JSON.parse(data.toString('utf8'));
  } catch {
    return { kind: 'close', code: Close.DECODE_ERROR, reason: 'invalid JSON' };
  }
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame))
    return { kind: 'close', code: Close.DECODE_ERROR, reason: 'a frame is a JSON object' };
  const { op, d } = frame as { op?: unknown; d?: unknown };
  if (typeof op !== 'number' || !Number.isInteger(op))
    return { kind: 'close', code: Close.DECODE_ERROR, reason: 'op must be an integer' };
  // D66: op 3 (visibility) is a person's only; a bot sending it is closed as before (D56).
  if (op === GatewayOp.VISIBILITY && people) {
    const visible = (d as { visible?: unknown } | null | undefined)?.visible;
    if (typeof d !== 'object' || d === null || typeof visible !== 'boolean')
      return { kind: 'invalid', message: 'visibility d must be {visible: boolean}' };
    return { kind: 'visibility', visible };
  }
  if (op !== GatewayOp.HEARTBEAT)
    return { kind: 'close', code: Close.UNKNOWN_OPCODE, reason: `unknown opcode ${op}` };
  if (d === null || d === undefined) return { kind: 'heartbeat', lastSeq: null };
  if (typeof d === 'number' && Number.isSafeInteger(d) && d >= 0)
    return { kind: 'heartbeat', lastSeq: d };
  return { kind: 'invalid', message: 'heartbeat d must be null or the last sequence number' };
}
