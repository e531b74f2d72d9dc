import type { Clock } from './clock.js';

/**
 * D3: 53-bit snowflake ids — 41 bits of milliseconds since EPOCH, 5 bits of node, 7 bits of
 * sequence — so every id is a safe JSON number, unique across nodes and increasing with time.
 * Arithmetic stays in doubles: every intermediate is an integer below 2^53.
 */
export const EPOCH_MS = Date.UTC(2026, 0, 1);
const NODE_BITS = 5;
const SEQ_BITS = 7;
const SEQ_MAX = (1 << SEQ_BITS) - 1;
const TIME_SHIFT = 2 ** (NODE_BITS + SEQ_BITS);

export class SnowflakeGenerator {
  private lastMs = -1;
  private seq = 0;

  constructor(
    private readonly nodeId: number,
    private readonly clock: Clock,
  ) {
    if (!Number.isInteger(nodeId) || nodeId < 0 || nodeId >= 1 << NODE_BITS)
      throw new RangeError(`node id must be 0–${(1 << NODE_BITS) - 1}`);
  }

  /** Never issue an id below one already stored (the clock may have stepped back across a restart). */
  advancePast(id: number): void {
    const ms = Math.floor(id / TIME_SHIFT);
    if (ms > this.lastMs) {
      this.lastMs = ms;
      this.seq = SEQ_MAX; // the next id moves to the following millisecond
    }
  }

  next(): number {
    let ms = Math.max(this.clock.now() - EPOCH_MS, 0);
    if (ms <= this.lastMs) {
      // Same millisecond, or the clock stepped back: keep counting from the last one so ids
      // stay increasing; when the sequence runs out, borrow the next millisecond.
      ms = this.lastMs;
      if (this.seq >= SEQ_MAX) {
        ms += 1;
        this.seq = 0;
      } else {
        this.seq += 1;
      }
    } else {
      this.seq = 0;
    }
    this.lastMs = ms;
    return ms * TIME_SHIFT + this.nodeId * (1 << SEQ_BITS) + this.seq;
  }
}

/** The smallest id that could have been issued at or after `unixMs` (for time-bounded queries). */
export function firstIdAt(unixMs: number): number {
  return Math.max(unixMs - EPOCH_MS, 0) * TIME_SHIFT;
}

export function idTimestamp(id: number): number {
  return Math.floor(id / TIME_SHIFT) + EPOCH_MS;
}
