import { readFileSync } from 'node:fs';
import { LightSocket } from './light-ws.js';

/**
 * A child process holding many people's gateway connections for `people-fanout` (started by
 * the benchmark with fork: same process tree, loopback only). It opens them 100 at a time,
 * reports over IPC, counts the MESSAGE_CREATE frames each receives, and exits when told to
 * (or when its parent goes away).
 */
interface Job {
  gatewayUrl: string;
  tokens: string[];
  heartbeatMs: number;
}

const job = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as Job;
const sockets: LightSocket[] = [];
const perSocket: number[] = [];
let failed = 0;
let closed = 0;

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
          onText: (p) => {
            if (p.subarray(0, 32).includes('MESSAGE_CREATE'))
              perSocket[i] = (perSocket[i] ?? 0) + 1;
          },
          onClose: () => void (closed += 1),
        });
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: 100 }, worker));
  send({ k: 'up', open: sockets.filter(Boolean).length, failed });
}

process.on('message', (m: { k: string }) => {
  if (m.k === 'count') {
    const counts = perSocket.slice().sort((a, b) => a - b);
    send({ k: 'count', min: counts[0] ?? 0, max: counts[counts.length - 1] ?? 0, closed });
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
