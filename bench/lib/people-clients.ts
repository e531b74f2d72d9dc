import { readFileSync } from 'node:fs';
import { LightSocket } from './light-ws.js';

/**
 * A child process holding many people's gateway connections for `people-fanout` (started by
 * the benchmark with fork: same process tree, loopback only). It opens them 100 at a time,
 * reports over IPC, counts the MESSAGE_CREATE frames each receives, and exits when told to
 * (or when its parent goes away). With `batchMs` its sockets read in batches (light-ws.ts): every
 * `batchMs` each reads what arrived meanwhile, so these thousands of stand-in clients take little
 * of the CPU they share with the server being measured.
 */
interface Job {
  gatewayUrl: string;
  tokens: string[];
  heartbeatMs: number;
  batchMs: number;
}

const job = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as Job;
const sockets: LightSocket[] = [];
const perSocket: number[] = [];
let failed = 0;
let closed = 0;
const CREATE = Buffer.from('"MESSAGE_CREATE"');

const send = (m: unknown): void => {
  process.send?.(m);
};

async function main(): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= job.tokens.length) return;
      perSocket[i] = 0;
      try {
        sockets[i] = await LightSocket.open({
          url: job.gatewayUrl,
          headers: { authorization: `Bearer ${job.tokens[i] as string}` },
          heartbeatMs: job.heartbeatMs,
          batchMs: job.batchMs,
          onText: (p) => {
            if (p.includes(CREATE)) perSocket[i] = (perSocket[i] ?? 0) + 1;
          },
          onClose: () => void (closed += 1),
        });
      } catch {
        failed++;
      }
    }
  };
  if (job.batchMs > 0) {
    // A share of the sockets every tick, in rotation: each reads every batchMs, and the reading
    // is spread evenly instead of one burst that would stall the shared cores.
    const TICKS = 20;
    let tick = 0;
    setInterval(() => {
      const n = sockets.length;
      const from = Math.floor((tick * n) / TICKS);
      const to = Math.floor(((tick + 1) * n) / TICKS);
      for (let i = from; i < to; i++) sockets[i]?.drain();
      tick = (tick + 1) % TICKS;
    }, job.batchMs / TICKS).unref();
  }
  await Promise.all(Array.from({ length: 100 }, worker));
  send({ k: 'up', open: sockets.filter(Boolean).length, failed });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

process.on('message', (m: { k: string }) => {
  if (m.k === 'count') {
    void (async () => {
      // Everything sent before the question is in the kernel: read it all before counting.
      for (let i = 0; i < 5; i++) {
        LightSocket.drainAll();
        await sleep(100);
      }
      const counts = perSocket.slice().sort((a, b) => a - b);
      send({ k: 'count', min: counts[0] ?? 0, max: counts[counts.length - 1] ?? 0, closed });
    })();
  } else if (m.k === 'stop') {
    for (const s of sockets) s?.close();
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));
main().catch((err: unknown) => {
  send({ k: 'error', message: String(err) });
  process.exit(1);
});
