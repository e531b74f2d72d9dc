import { describe, expect, it } from 'vitest';
import { digitCount, frameInto, frameLength, frameOf } from '../../src/gateway/frame-template.js';
import {
  PeopleHub,
  prepare,
  REPLAY_MAX,
  sharedFrame,
  type PersonSession,
  type SessionSink,
} from '../../src/gateway/people-hub.js';

// D51 fan-out: the frame of an event is built once per width of `s` (a template) and copied with
// only the digits patched per recipient; sessions' frames leave in one write per session per
// sweep. These check every byte of that against a frame serialized the plain way.
const ev = (data: string, channelId = 2) =>
  prepare({
    type: 'MESSAGE_CREATE',
    data,
    audience: { kind: 'channel', guildId: 1, channelId },
  });

/** The frames in `buf` (server → client: unmasked), decoded. */
function decodeAll(buf: Buffer): Array<{ op: number; t: string; s: number; d: unknown }> {
  const out = [];
  let at = 0;
  while (at < buf.length) {
    expect((buf[at] as number) & 0x8f).toBe(0x81); // FIN + text
    expect((buf[at + 1] as number) & 0x80).toBe(0); // servers do not mask
    let len = (buf[at + 1] as number) & 0x7f;
    let h = 2;
    if (len === 126) {
      len = buf.readUInt16BE(at + 2);
      h = 4;
    } else if (len === 127) {
      len = Number(buf.readBigUInt64BE(at + 2));
      h = 10;
    }
    out.push(JSON.parse(buf.subarray(at + h, at + h + len).toString('utf8')));
    at += h + len;
  }
  expect(at).toBe(buf.length);
  return out;
}

/** The frame as a plain serializer would make it. */
function expected(data: string, s: number): Buffer {
  const text = Buffer.from(`{"op":0,"t":"MESSAGE_CREATE","s":${s},"d":${data}}`);
  const n = text.length;
  const head =
    n < 126
      ? Buffer.from([0x81, n])
      : n < 65_536
        ? Buffer.from([0x81, 126, n >> 8, n & 0xff])
        : Buffer.concat([Buffer.from([0x81, 127]), bigEndian64(n)]);
  return Buffer.concat([head, text]);
}
const bigEndian64 = (n: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
};

describe('people hub frame templates (D51)', () => {
  it('digitCount at every width', () => {
    let p = 1;
    for (let w = 1; w <= 15; w++) {
      expect(digitCount(p)).toBe(w);
      expect(digitCount(p * 10 - 1)).toBe(w);
      p *= 10;
    }
    expect(digitCount(p)).toBe(16);
    expect(digitCount(0)).toBe(1);
    expect(digitCount(2 ** 31)).toBe(10);
    expect(digitCount(Number.MAX_SAFE_INTEGER)).toBe(16);
  });

  it('frameOf and frameInto match a plain serialization at every width of s, rollovers included', () => {
    const data = JSON.stringify({ content: 'hello', n: 1 });
    const e = ev(data);
    const values = [1, 2, 9, 10, 11, 99, 100, 101, 999, 1000, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 9];
    for (let p = 1; p < 1e16; p *= 10) values.push(p - 1, p, p + 1);
    values.push(Number.MAX_SAFE_INTEGER);
    for (const s of values) {
      expect([s, frameOf(e, s).toString('latin1')]).toEqual([
        s,
        expected(data, s).toString('latin1'),
      ]);
      expect(frameLength(e, s)).toBe(expected(data, s).length);
    }
    // Consecutive s into one buffer (a coalesced write), across 9→10 and 99→100.
    const run = [8, 9, 10, 11, 98, 99, 100, 101];
    const buf = Buffer.alloc(
      run.reduce((n, s) => n + frameLength(e, s), 0),
      0xee,
    );
    let at = 0;
    for (const s of run) at = frameInto(e, s, buf, at);
    expect(at).toBe(buf.length);
    expect(decodeAll(buf).map((f) => f.s)).toEqual(run);
    expect(buf).toEqual(Buffer.concat(run.map((s) => expected(data, s))));
  });

  it('the header grows where a wider s crosses the 125 / 65,535 byte boundaries', () => {
    // Payload of exactly 125 bytes with a 1-digit s: 2 digits make it 126 (16-bit length).
    const base = '{"op":0,"t":"MESSAGE_CREATE","s":,"d":}'.length;
    const small = `"${'x'.repeat(125 - base - 1 - 2)}"`;
    const e = ev(small);
    expect(frameOf(e, 9)).toEqual(expected(small, 9));
    expect(frameOf(e, 9)[1]).toBe(125);
    expect(frameOf(e, 10)).toEqual(expected(small, 10));
    expect(frameOf(e, 10)[1]).toBe(126);
    const big = `"${'y'.repeat(65_535 - base - 1 - 2)}"`;
    const b = ev(big);
    expect(frameOf(b, 9)).toEqual(expected(big, 9));
    expect(frameOf(b, 9)[1]).toBe(126);
    expect(frameOf(b, 10)).toEqual(expected(big, 10));
    expect(frameOf(b, 10)[1]).toBe(127);
  });

  it('sharedFrame: the same bytes for the same s, a fresh frame for another, never changed after', () => {
    const data = '{"a":1}';
    const e = ev(data);
    const f7 = sharedFrame(e, 7);
    const copy = Buffer.from(f7);
    expect(sharedFrame(e, 7)).toBe(f7);
    const f10 = sharedFrame(e, 10);
    expect(f10).not.toBe(f7);
    expect(f10).toEqual(expected(data, 10));
    expect(f7).toEqual(copy);
  });
});

/** A sink that records writes; `keep` makes it behave like a slow socket that keeps the buffer. */
function recorder(keep = false) {
  const writes: Buffer[] = [];
  const kept: Array<{ buf: Buffer; copy: Buffer }> = [];
  const sink: SessionSink = {
    send: (text) => void writes.push(Buffer.from(`TEXT:${text}`)),
    sendFrame: (buf, immutable) => {
      writes.push(Buffer.from(buf));
      if (keep && !immutable) kept.push({ buf, copy: Buffer.from(buf) });
      return !keep;
    },
    close: () => {},
  };
  return { sink, writes, kept };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await tick();
}

function hubWith(
  count: number,
  sink: () => SessionSink,
  views = new Map([[1, new Set([2])]]),
): { hub: PeopleHub; sessions: PersonSession[] } {
  const hub = new PeopleHub({ db: undefined as never, log: () => {} });
  const sessions: PersonSession[] = [];
  for (let i = 0; i < count; i++) {
    const s = hub.open(100 + i, `h${i}`);
    s.seq = 1; // READY
    s.sent = 1;
    s.sink = sink();
    hub.started(s, views);
    sessions.push(s);
  }
  return { hub, sessions };
}

describe('people hub writes (D51)', () => {
  it('events of one turn reach each session in one write, gapless s, only where the channel is seen', async () => {
    const r = [recorder(), recorder(), recorder()];
    // Sessions 0 and 1 see channel 2; session 2 sees channel 3 only.
    const hub2 = new PeopleHub({ db: undefined as never, log: () => {} });
    const views = [new Set([2]), new Set([2, 3]), new Set([3])];
    for (let k = 0; k < 3; k++) {
      const s = hub2.open(100 + k, `h${k}`);
      s.seq = 1;
      s.sent = 1;
      s.sink = (r[k] as ReturnType<typeof recorder>).sink;
      hub2.started(s, new Map([[1, views[k] as Set<number>]]));
    }
    for (const x of r) x.writes.length = 0;
    for (let n = 0; n < 5; n++) hub2.dispatch({ ...rawIn(2), data: `{"n":${n}}` });
    hub2.dispatch({ ...rawIn(3), data: '{"other":1}' });
    await settle();
    expect(r.map((x) => x.writes.length)).toEqual([1, 1, 1]);
    expect(decodeAll(r[0]?.writes[0] as Buffer).map((f) => [f.s, f.d])).toEqual(
      [0, 1, 2, 3, 4].map((n) => [n + 2, { n }]),
    );
    expect(decodeAll(r[1]?.writes[0] as Buffer).map((f) => f.s)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(decodeAll(r[2]?.writes[0] as Buffer).map((f) => [f.s, f.d])).toEqual([
      [2, { other: 1 }],
    ]);
  });

  it('a slow socket that keeps the assembled buffer never sees it change afterwards', async () => {
    const slow = recorder(true);
    const fast = recorder();
    const sinks = [slow.sink, fast.sink];
    let i = 0;
    const { hub } = hubWith(2, () => sinks[i++] as SessionSink);
    for (let n = 0; n < 3; n++) hub.dispatch({ ...rawIn(2), data: `{"n":${n}}` });
    await settle();
    for (let n = 3; n < 6; n++) hub.dispatch({ ...rawIn(2), data: `{"n":${n}}` });
    await settle();
    expect(slow.kept.length).toBe(2);
    for (const k of slow.kept) expect(k.buf).toEqual(k.copy);
    expect(decodeAll(Buffer.concat(slow.writes)).map((f) => f.s)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(decodeAll(Buffer.concat(fast.writes)).map((f) => f.s)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it('more than the replay buffer in one turn: written before it would be overwritten, none lost', async () => {
    const r = recorder();
    const { hub } = hubWith(1, () => r.sink);
    const total = REPLAY_MAX * 2 + 7;
    for (let n = 0; n < total; n++) hub.dispatch({ ...rawIn(2), data: `{"n":${n}}` });
    await settle();
    const frames = decodeAll(Buffer.concat(r.writes));
    expect(frames.map((f) => f.s)).toEqual(Array.from({ length: total }, (_, k) => k + 2));
    expect(frames.map((f) => (f.d as { n: number }).n)).toEqual(
      Array.from({ length: total }, (_, k) => k),
    );
  });

  it('a big batch is split into writes of at most 64 KiB, in order', async () => {
    const r = recorder();
    const { hub } = hubWith(1, () => r.sink);
    const body = JSON.stringify({ content: 'z'.repeat(3000) });
    for (let n = 0; n < 100; n++) hub.dispatch({ ...rawIn(2), data: body });
    await settle();
    expect(r.writes.length).toBeGreaterThan(1);
    for (const w of r.writes) expect(w.length).toBeLessThanOrEqual(64 * 1024);
    expect(decodeAll(Buffer.concat(r.writes)).map((f) => f.s)).toEqual(
      Array.from({ length: 100 }, (_, k) => k + 2),
    );
  });

  it('a marker (RESUMED) goes out after every dispatch before it', async () => {
    const r = recorder();
    const { hub, sessions } = hubWith(1, () => r.sink);
    const s = sessions[0] as PersonSession;
    hub.dispatch({ ...rawIn(2), data: '{"n":0}' });
    hub.dispatch({ ...rawIn(2), data: '{"n":1}' });
    hub.marker(s, (seq, written) => JSON.stringify({ seq, written }));
    await settle();
    expect(r.writes.length).toBe(2);
    expect(decodeAll(r.writes[0] as Buffer).map((f) => f.s)).toEqual([2, 3]);
    expect(r.writes[1]?.toString()).toBe('TEXT:{"seq":4,"written":2}');
  });
});

function rawIn(channelId: number) {
  return {
    type: 'MESSAGE_CREATE',
    data: '{}',
    audience: { kind: 'channel' as const, guildId: 1, channelId },
  };
}
