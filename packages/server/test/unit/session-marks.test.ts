import { describe, expect, it } from 'vitest';
import { keyAfter, parseRecipients, recipientsText, type LogKey } from '../../src/events/log.js';
import {
  decodeMarks,
  encodeMarks,
  excluded,
  MarkKind,
  parseSnapshot,
  SessionCursor,
  withMark,
  MAX_MARKS,
  type Mark,
} from '../../src/gateway/session-marks.js';

// Issue 15: per-session numbering derived from the log and the session's marks.
const row = (xid: number, pos: number): LogKey => ({ xid, pos });

describe('session marks and cursor', () => {
  it('recipients round-trip through their stored text', () => {
    expect(recipientsText([1, 5, 90071992547409])).toBe(',1,5,90071992547409,');
    expect(parseRecipients(',1,5,90071992547409,')).toEqual([1, 5, 90071992547409]);
    expect(parseRecipients(',7,')).toEqual([7]);
  });

  it('numbers rows from the cursor on; rows below it are not dispatches', () => {
    const c = new SessionCursor(1, row(0, 10), [], undefined);
    const passed: Mark[] = [];
    expect(c.row(row(0, 9), (m) => passed.push(m))).toBeUndefined();
    expect(c.row(row(0, 10), (m) => passed.push(m))).toBe(2);
    expect(c.row(row(0, 14), (m) => passed.push(m))).toBe(3);
    expect(c.key).toEqual(row(0, 15));
    expect(passed).toEqual([]);
  });

  it('a counted mark takes its s before every row at or above its key, after every row below', () => {
    const resumed: Mark = { s: 4, xid: 0, pos: 20, k: MarkKind.RESUMED };
    const ckpt: Mark = { s: 3, xid: 0, pos: 15, k: MarkKind.CHECKPOINT };
    const c = new SessionCursor(1, row(0, 10), [ckpt, resumed], undefined);
    const passed: number[] = [];
    const at = (m: Mark) => passed.push(m.s);
    expect(c.row(row(0, 12), at)).toBe(2);
    expect(c.row(row(0, 19), at)).toBe(3);
    // The mark sits at key 20 = just after row 19: it passes with the next row, before it.
    expect(passed).toEqual([]);
    expect(c.row(row(0, 20), at)).toBe(5);
    expect(passed).toEqual([4]); // checkpoints are not counted
  });

  it('reach passes marks at or below the end, and moves the key', () => {
    const m: Mark = { s: 7, xid: 3, pos: 0, k: MarkKind.RESUMED };
    const c = new SessionCursor(6, row(2, 5), [m], undefined);
    const passed: number[] = [];
    c.reach(row(2, 9), (x) => passed.push(x.s));
    expect(passed).toEqual([]);
    expect(c.key).toEqual(row(2, 9));
    c.reach(row(3, 0), (x) => passed.push(x.s));
    expect(passed).toEqual([7]);
    expect(c.s).toBe(7);
    // Never backwards.
    c.reach(row(1, 0), () => {});
    expect(c.key).toEqual(row(3, 0));
    expect(keyAfter(row(3, 0))).toEqual(row(3, 1));
  });

  it("PostgreSQL: rows READY's snapshot already saw are skipped; running or later ones are not", () => {
    const snap = parseSnapshot('100:110:103,107');
    expect(snap).toEqual({ xmin: 100, xmax: 110, xip: new Set([103, 107]) });
    expect(excluded(snap, 99)).toBe(false); // below READY's mark anyway
    expect(excluded(snap, 100)).toBe(true);
    expect(excluded(snap, 103)).toBe(false);
    expect(excluded(snap, 109)).toBe(true);
    expect(excluded(snap, 110)).toBe(false);
    expect(parseSnapshot('5:5:')).toEqual({ xmin: 5, xmax: 5, xip: new Set() });
    const c = new SessionCursor(1, row(100, 0), [], snap);
    expect(c.row(row(100, 1), () => {})).toBeUndefined();
    expect(c.row(row(103, 2), () => {})).toBe(2);
    expect(c.row(row(109, 3), () => {})).toBeUndefined();
    expect(c.row(row(120, 4), () => {})).toBe(3);
  });

  it('marks survive their JSON form; bad input is refused; only the newest are kept', () => {
    const marks: Mark[] = [
      { s: 1, xid: 0, pos: 3, k: MarkKind.READY },
      { s: 9, xid: 0, pos: 40, k: MarkKind.CHECKPOINT },
    ];
    expect(decodeMarks(encodeMarks(marks))).toEqual(marks);
    expect(() => decodeMarks('{}')).toThrow();
    expect(() => decodeMarks('[[1,2,3]]')).toThrow();
    expect(() => decodeMarks('[[1,2,3,9]]')).toThrow();
    let many: Mark[] = [];
    for (let i = 1; i <= MAX_MARKS + 5; i++)
      many = withMark(many, { s: i, xid: 0, pos: i, k: MarkKind.CHECKPOINT });
    expect(many).toHaveLength(MAX_MARKS);
    expect(many[0]?.s).toBe(6);
  });
});
