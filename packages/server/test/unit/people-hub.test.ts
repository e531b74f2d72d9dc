import { describe, expect, it } from 'vitest';
import { frameOf } from '../../src/gateway/frame-template.js';
import { EventTable, PersonSession, prepare, REPLAY_MAX } from '../../src/gateway/people-hub.js';

// D51 fan-out pieces: the frame built around `s` (one copy per recipient, never a
// serialization) and the bounded replay buffer behind a person's resume.
const ev = (data: string) =>
  prepare({
    type: 'MESSAGE_CREATE',
    data,
    audience: { kind: 'channel', guildId: 1, channelId: 2 },
  });

/** Decode a server→client WebSocket text frame (RFC 6455, unmasked). */
function decode(buf: Buffer): { fin: boolean; opcode: number; text: string } {
  let len = (buf[1] as number) & 0x7f;
  let off = 2;
  if (len === 126) {
    len = buf.readUInt16BE(2);
    off = 4;
  } else if (len === 127) {
    len = Number(buf.readBigUInt64BE(2));
    off = 10;
  }
  expect((buf[1] as number) & 0x80).toBe(0); // servers do not mask
  expect(buf.length).toBe(off + len);
  return {
    fin: ((buf[0] as number) & 0x80) !== 0,
    opcode: (buf[0] as number) & 0x0f,
    text: buf.subarray(off).toString('utf8'),
  };
}

describe('people hub frames and replay (D51)', () => {
  it('frameOf: a complete text frame of {op:0,t,s,d} for every payload size class', () => {
    for (const size of [10, 200, 70_000]) {
      const data = JSON.stringify({ content: 'é'.repeat(size) });
      const e = ev(data);
      for (const s of [1, 42, 1_000_000]) {
        const f = decode(frameOf(e, s));
        expect(f.fin).toBe(true);
        expect(f.opcode).toBe(1);
        expect(JSON.parse(f.text)).toStrictEqual({
          op: 0,
          t: 'MESSAGE_CREATE',
          s,
          d: JSON.parse(data),
        });
      }
    }
  });

  it('the replay buffer serves every dispatch after seq while it holds them, and says when it cannot', () => {
    const s = new PersonSession(1, 'hash', new EventTable());
    s.seq = 1; // READY
    s.sink = { send: () => {}, sendFrame: () => {}, close: () => {} };
    const e = ev('{"n":1}');
    for (let i = 0; i < REPLAY_MAX + 10; i++) expect(s.push(e)).toBe(true); // attached: never refuses
    const last = s.seq;
    expect(last).toBe(REPLAY_MAX + 11);
    expect(s.canReplayFrom(last)).toBe(true); // nothing missed
    expect(s.canReplayFrom(last - REPLAY_MAX)).toBe(true); // exactly the buffer
    expect(s.canReplayFrom(last - REPLAY_MAX - 1)).toBe(false); // one too old
    expect(s.canReplayFrom(last + 1)).toBe(false); // ahead of the session
    expect(s.canReplayFrom(0)).toBe(false);
    const frames = s.replayFrom(last - 3).map((b) => JSON.parse(decode(b).text).s as number);
    expect(frames).toEqual([last - 2, last - 1, last]);
    // Detached: evicting a dispatch no socket ever got makes the session unresumable.
    s.sink = undefined;
    s.sentAtDetach = s.seq;
    for (let i = 0; i < REPLAY_MAX; i++) expect(s.push(e)).toBe(true);
    expect(s.push(e)).toBe(false);
  });

  it('a marker (RESUMED) takes an s but is not replayed', () => {
    const s = new PersonSession(1, 'hash', new EventTable());
    s.seq = 1;
    s.push(ev('{"n":1}'));
    s.push(null);
    s.push(ev('{"n":2}'));
    expect(s.replayFrom(1).map((b) => JSON.parse(decode(b).text).s)).toEqual([2, 4]);
  });

  it('the event table keeps an event exactly while some replay buffer refers to it', () => {
    const table = new EventTable();
    const a = new PersonSession(1, 'a', table);
    const b = new PersonSession(2, 'b', table);
    a.seq = b.seq = 1;
    const first = ev('{"n":0}');
    a.push(first);
    b.push(first);
    expect(first.refs).toBe(2);
    expect(table.size).toBe(1);
    // Filling both buffers evicts `first` from each: the table lets go of it with the last slot.
    for (let i = 1; i < REPLAY_MAX; i++) {
      const e = ev(`{"n":${i}}`);
      a.push(e);
      b.push(e);
    }
    expect(table.size).toBe(REPLAY_MAX);
    const next = ev('{"n":"next"}');
    a.push(next);
    expect(first.refs).toBe(1);
    expect(table.size).toBe(REPLAY_MAX + 1); // b still holds `first`
    b.push(next);
    expect(first.refs).toBe(0);
    expect(table.size).toBe(REPLAY_MAX);
    // The frames come back through the table with their own `s`.
    expect(JSON.parse(decode(a.replayFrom(a.seq - 1)[0] as Buffer).text)).toStrictEqual({
      op: 0,
      t: 'MESSAGE_CREATE',
      s: a.seq,
      d: { n: 'next' },
    });
    // An ended session's buffer is released; one ended session does not free the other's events.
    a.ended = true;
    a.dropReplay();
    expect(table.size).toBe(REPLAY_MAX);
    b.ended = true;
    b.dropReplay();
    expect(table.size).toBe(0);
    expect(b.push(ev('{}'))).toBe(true); // ended: nothing kept
    expect(table.size).toBe(0);
  });
});
