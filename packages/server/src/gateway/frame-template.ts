/**
 * Dispatch frames built once per event (issue 15: "one pre-built frame per event, only `s`
 * differs"). A dispatch `{"op":0,"t":…,"s":<s>,"d":…}` is the event's bytes around the session's
 * `s`; the complete WebSocket text frame (RFC 6455 header, unmasked as servers send) is built
 * once per event and digit count of `s` with the digits zeroed, then copied and patched per
 * recipient — no serialization, no UTF-8 encoding and no framing per recipient. The result is
 * written to the socket as it is (SocketLink.sendFrame).
 */
export interface FrameParts {
  /** `{"op":0,"t":"TYPE","s":` */
  readonly prefix: Buffer;
  /** `,"d":DATA}` */
  readonly suffix: Buffer;
  /** whole frames with `s` zeroed, one per digit count of `s` (built on first use) */
  readonly templates: Array<Buffer | undefined>;
}

export function frameParts(type: string, data: string): FrameParts {
  return {
    prefix: Buffer.from(`{"op":0,"t":${JSON.stringify(type)},"s":`),
    suffix: Buffer.from(`,"d":${data}}`),
    templates: [],
  };
}

/** How many decimal digits `s` has (1 for 0…9). */
export function digitCount(s: number): number {
  let w = 1;
  for (let v = s; v >= 10; v = div10(v)) w++;
  return w;
}

const div10 = (v: number): number => (v < 0x80000000 ? (v / 10) | 0 : Math.floor(v / 10));

function template(e: FrameParts, width: number): Buffer {
  const cached = e.templates[width];
  if (cached) return cached;
  const n = e.prefix.length + width + e.suffix.length;
  const h = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const buf = Buffer.allocUnsafe(h + n);
  buf[0] = 0x81; // FIN + text
  if (h === 2) buf[1] = n;
  else if (h === 4) {
    buf[1] = 126;
    buf.writeUInt16BE(n, 2);
  } else {
    buf[1] = 127;
    buf.writeBigUInt64BE(BigInt(n), 2);
  }
  e.prefix.copy(buf, h);
  buf.fill(0x30, h + e.prefix.length, h + e.prefix.length + width);
  e.suffix.copy(buf, h + e.prefix.length + width);
  e.templates[width] = buf;
  return buf;
}

/** Bytes of the event's frame under `s`. */
export function frameLength(e: FrameParts, s: number): number {
  return template(e, digitCount(s)).length;
}

/**
 * Writes the event's frame under `s` into `target` at `at` (room checked by the caller): one
 * copy of the template and the digits patched in place. Returns the offset after it.
 */
export function frameInto(e: FrameParts, s: number, target: Buffer, at: number): number {
  const width = digitCount(s);
  const t = template(e, width);
  target.set(t, at);
  // The digits sit just before the suffix, at the template's end.
  let p = at + t.length - e.suffix.length - 1;
  let v = s;
  for (let i = 0; i < width; i++) {
    const q = div10(v);
    target[p--] = 0x30 + (v - q * 10);
    v = q;
  }
  return at + t.length;
}

/** The event's frame under `s` as a buffer of its own. */
export function frameOf(e: FrameParts, s: number): Buffer {
  const buf = Buffer.allocUnsafe(frameLength(e, s));
  frameInto(e, s, buf, 0);
  return buf;
}
