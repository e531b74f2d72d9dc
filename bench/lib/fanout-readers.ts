import { readFileSync } from 'node:fs';
import { LightSocket } from './light-ws.js';
import { nowMs } from './stats.js';

/**
 * A child process holding some of fanout (b)'s reading bots (issue 29), started by the benchmark
 * with fork, so the figure is the server's latency and not the load generator's: in the old form
 * the 100 readers were `ws` clients decoding every frame in the benchmark's own process, beside
 * the open-loop sender.
 *
 * Each socket is a light-ws.ts reader that reads at once (no batching: every socket is measured)
 * and looks at a frame's first PEEK bytes only: MESSAGE_CREATE, its `s`, its message id and its
 * content `b-<index>@<send time>` (the send time in `nowMs()`, a monotonic clock shared by the
 * processes of one machine), so the latency is computed here, per frame, without copying frames
 * to the parent. Checks per socket as before: `s` grows by exactly 1 (D31), ids increase (D3).
 * The same readers serve the floor run: a bare `ws` server (bench/servers/floor.ts) that sends the
 * same frames without any protocol (no HELLO, READY or heartbeat answers).
 */
interface Job {
  gatewayUrl: string;
  tokens: string[];
  heartbeatMs: number;
}

const PEEK = 1024;
const job = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as Job;

interface Reader {
  lastS: number;
  lastId: string;
  outOfOrder: number;
  seen: Uint8Array;
  received: number;
}

let total = 0;
let latencies = new Float64Array(1 << 16);
let count = 0;
const readers: Reader[] = [];
const sockets: LightSocket[] = [];
let closed = 0;

const send = (m: unknown): void => {
  process.send?.(m);
};

const push = (v: number): void => {
  if (count === latencies.length) {
    const next = new Float64Array(latencies.length * 2);
    next.set(latencies);
    latencies = next;
  }
  latencies[count++] = v;
};

/** ids are decimal strings of up to 19 digits: compare by length, then by digits */
const idLess = (a: string, b: string): boolean =>
  a.length !== b.length ? a.length < b.length : a < b;

const S = /"s":(\d+)/;
const ID = /"d":\{[^}]*?"id":"?(\d+)/;
const CONTENT = /"content":"b-(\d+)@([\d.]+)"/;

function onText(r: Reader, peek: Buffer): void {
  const at = nowMs();
  const text = peek.toString('latin1');
  if (!text.includes('"MESSAGE_CREATE"')) return;
  const c = CONTENT.exec(text);
  if (!c) return;
  const index = Number(c[1]);
  push(at - Number(c[2]));
  if (index < r.seen.length) r.seen[index] = 1;
  r.received++;
  const s = Number(S.exec(text)?.[1] ?? 0);
  const id = ID.exec(text)?.[1] ?? '';
  if (r.lastS !== 0 && s !== r.lastS + 1) r.outOfOrder++;
  if (r.lastId !== '' && !idLess(r.lastId, id)) r.outOfOrder++;
  r.lastS = s;
  r.lastId = id;
}

async function main(): Promise<void> {
  for (let i = 0; i < job.tokens.length; i++) {
    const r: Reader = { lastS: 0, lastId: '', outOfOrder: 0, seen: new Uint8Array(0), received: 0 };
    readers.push(r);
    sockets.push(
      await LightSocket.open({
        url: job.gatewayUrl,
        headers: { authorization: `Bearer ${job.tokens[i] as string}` },
        heartbeatMs: job.heartbeatMs,
        peekBytes: PEEK,
        onText: (p) => onText(r, p),
        onClose: () => void (closed += 1),
      }),
    );
  }
  send({ k: 'up', open: sockets.length });
}

process.on(
  'message',
  (
    m:
      | { k: 'start'; total: number }
      | { k: 'progress' }
      | { k: 'count'; sentAt: number[]; cutAt: number },
  ) => {
    if (m.k === 'progress') {
      send({ k: 'progress', received: readers.reduce((n, r) => n + r.received, 0) });
    } else if (m.k === 'start') {
      // Frames before this (READY, earlier phases) are not counted.
      total = m.total;
      count = 0;
      for (const r of readers) {
        r.seen = new Uint8Array(total);
        r.received = 0;
        r.outOfOrder = 0;
        r.lastS = 0;
        r.lastId = '';
      }
      send({ k: 'started' });
    } else if (m.k === 'count') {
      // What has not arrived by the cut-off enters the percentiles with its wait so far.
      let missing = 0;
      for (const r of readers)
        for (let i = 0; i < total; i++) {
          if (r.seen[i]) continue;
          missing++;
          push(m.cutAt - (m.sentAt[i] ?? m.cutAt));
        }
      send({
        k: 'count',
        received: readers.reduce((n, r) => n + r.received, 0),
        missing,
        outOfOrder: readers.reduce((n, r) => n + r.outOfOrder, 0),
        closed,
        latencies: Array.from(latencies.subarray(0, count)),
      });
    }
  },
);
process.on('disconnect', () => {
  for (const s of sockets) s.close();
  process.exit(0);
});
main().catch((err: unknown) => {
  send({ k: 'error', message: String(err) });
  process.exit(1);
});
