import { keyLess, type LogKey, type LogRow } from '../events/log.js';

/**
 * Per-session numbering over the shared event log (issue 15; D30/D31 `s`).
 *
 * A session's dispatches are: READY (s 1), then the log rows whose recipients include its bot,
 * in log order, each +1, with a RESUMED dispatch wherever a connection resumed it (a RESUMED
 * takes an `s` too). Nothing of this is stored per event. What is stored is a short list of
 * *marks* on the session (gateway_sessions.marks), each "after dispatch `s`, every row below key
 * `key` is accounted for":
 *  - READY and RESUMED marks are themselves dispatches (number `s`) that sit before every row
 *    whose key is ≥ theirs;
 *  - CHECKPOINT marks are written by the node holding the connection every few seconds while
 *    the session advances (and when its connection drops): `s` is the last dispatch sent.
 * A resume to `seq` starts at the last mark with s ≤ seq and counts forward through the log and
 * the later marks (session-store.ts) — a bounded scan. Every dispatch keeps its original `s`,
 * wherever and whenever it is numbered, because the log's order below its end never changes and
 * marks sit at fixed keys.
 *
 * On PostgreSQL READY's mark sits at its snapshot's xmin, and rows of transactions that had
 * committed by READY's snapshot (already part of what READY describes) are skipped: `excluded`.
 */
export const MarkKind = { READY: 0, RESUMED: 1, CHECKPOINT: 2 } as const;
export type MarkKind = (typeof MarkKind)[keyof typeof MarkKind];

export interface Mark extends LogKey {
  readonly s: number;
  readonly k: MarkKind;
}

/** The oldest marks go first; a resume from before the oldest kept one gets op 9 (D31). */
export const MAX_MARKS = 24;

export const counted = (m: Mark): boolean => m.k !== MarkKind.CHECKPOINT;

export function encodeMarks(marks: readonly Mark[]): string {
  return JSON.stringify(marks.map((m) => [m.s, m.xid, m.pos, m.k]));
}

export function decodeMarks(text: string): Mark[] {
  const raw: unknown = JSON.parse(text);
  if (!Array.isArray(raw)) throw new Error('session marks: not a list');
  return raw.map((v: unknown) => {
    if (!Array.isArray(v) || v.length !== 4 || !v.every((x) => Number.isSafeInteger(x)))
      throw new Error('session marks: bad entry');
    const [s, xid, pos, k] = v as [number, number, number, number];
    if (k !== 0 && k !== 1 && k !== 2) throw new Error('session marks: bad kind');
    return { s, xid, pos, k };
  });
}

/** Keep the newest MAX_MARKS. */
export const withMark = (marks: readonly Mark[], m: Mark): Mark[] =>
  [...marks, m].slice(-MAX_MARKS);

/**
 * PostgreSQL READY snapshot `xmin:xmax:xip1,xip2,…`: a row of transaction x was part of READY's
 * state when xmin ≤ x < xmax and x is not in xip (x < xmin is below READY's mark anyway).
 */
export interface ReadySnapshot {
  readonly xmin: number;
  readonly xmax: number;
  readonly xip: ReadonlySet<number>;
}

export function parseSnapshot(text: string | null): ReadySnapshot | undefined {
  if (text === null) return undefined;
  const [a, b, c] = text.split(':');
  const xmin = Number(a);
  const xmax = Number(b);
  if (!Number.isSafeInteger(xmin) || !Number.isSafeInteger(xmax))
    throw new Error(`bad snapshot ${text}`);
  const xip = new Set(c ? c.split(',').filter(Boolean).map(Number) : []);
  return { xmin, xmax, xip };
}

/** The row was already part of READY's state: not a dispatch of this session. */
export const excluded = (snap: ReadySnapshot | undefined, xid: number): boolean =>
  snap !== undefined && xid >= snap.xmin && xid < snap.xmax && !snap.xip.has(xid);

/**
 * Where a session stands in the log: the last `s` given, the key below which every row is
 * accounted for, and the counted marks still ahead (older RESUMEDs met again on a replay, and
 * the one a resuming connection will send). Feeding it rows in log order (and the log's end as
 * it moves) yields each dispatch's `s` — the one numbering used by live delivery, replay and the
 * resume scan alike.
 */
export class SessionCursor {
  private ahead: Mark[];
  /** the key, as two numbers: this runs once per recipient per event (no allocation) */
  private kx: number;
  private kp: number;

  constructor(
    public s: number,
    key: LogKey,
    ahead: readonly Mark[],
    private readonly snap: ReadySnapshot | undefined,
  ) {
    this.kx = key.xid;
    this.kp = key.pos;
    this.ahead = ahead.filter(counted).sort((x, y) => x.s - y.s);
  }

  /** every row of the session below this key is accounted for */
  get key(): LogKey {
    return { xid: this.kx, pos: this.kp };
  }

  get pendingMarks(): readonly Mark[] {
    return this.ahead;
  }

  /**
   * A row in log order: the marks it passes (in order), then the row's own `s`, or undefined
   * when it is not a dispatch of this session (below the cursor, or excluded by READY).
   */
  row(r: LogRow | LogKey, passed: (m: Mark) => void): number | undefined {
    if (r.xid < this.kx || (r.xid === this.kx && r.pos < this.kp)) return undefined;
    if (this.ahead.length > 0) this.passTo(r.xid, r.pos, passed);
    this.kx = r.xid;
    this.kp = r.pos + 1;
    if (excluded(this.snap, r.xid)) return undefined;
    this.s += 1;
    // Marks at exactly the new key pass with the next row or `reach`, not here: a caller that
    // watches for a given `s` sees this row's number before any mark's.
    return this.s;
  }

  /** Every row below `end` has been fed: marks at or below it are passed. */
  reach(end: LogKey, passed: (m: Mark) => void): void {
    if (keyLess(this.key, end)) {
      this.kx = end.xid;
      this.kp = end.pos;
    }
    this.passTo(this.kx, this.kp, passed);
  }

  private passTo(xid: number, pos: number, passed: (m: Mark) => void): void {
    for (;;) {
      const m = this.ahead[0];
      if (!m || xid < m.xid || (xid === m.xid && pos < m.pos)) return;
      this.ahead.shift();
      this.s = m.s;
      // No row of the session lies between the cursor and the mark: the mark's key is as good.
      if (this.kx < m.xid || (this.kx === m.xid && this.kp < m.pos)) {
        this.kx = m.xid;
        this.kp = m.pos;
      }
      passed(m);
    }
  }
}
