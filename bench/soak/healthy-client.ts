import { readFileSync } from 'node:fs';
import { HttpClient } from '../lib/http-client.js';
import { nowMs, sleep } from '../lib/stats.js';

/**
 * The soak's healthy clients (issue 10), in a process of their own (started with fork), so that
 * the latency they measure is the server's and not the event loop of the process that drives
 * hundreds of sockets of load. Each client — a bot or a person, each with its own token and so
 * its own rate-limit buckets (D25) — makes one plain request every `intervalMs`, cycling through
 * "who am I", a page of history and a message send, each on its own keep-alive connection.
 * When told `stop` it answers with every latency, the messages it got acknowledged and any
 * answer it did not expect, then exits (also when its parent goes away).
 */
export interface HealthyJob {
  origin: string;
  intervalMs: number;
  clients: Array<{ kind: 'bot' | 'person'; token: string; channelId: number }>;
}

export interface HealthyResult {
  k: 'result';
  latencies: number[];
  /** when each of `latencies` started (nowMs, comparable across processes) */
  at: number[];
  /** per request kind: `me`, `history`, `send` */
  byKind: Record<string, number[]>;
  acked: Array<{ id: number; channelId: number }>;
  unexpected: string[];
}

const job = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as HealthyJob;
let running = true;
const latencies: number[] = [];
const at: number[] = [];
const byKind: Record<string, number[]> = { me: [], history: [], send: [] };
const acked: Array<{ id: number; channelId: number }> = [];
const unexpected: string[] = [];

async function client(c: HealthyJob['clients'][number], index: number): Promise<void> {
  const http = new HttpClient(job.origin, 1);
  const me = c.kind === 'bot' ? '/api/v1/bot/me' : '/app/v1/users/@me';
  const history = `/api/v1/channels/${c.channelId}/messages?limit=20`;
  const send = `/api/v1/channels/${c.channelId}/messages`;
  // Clients start spread over one interval.
  await sleep((index * job.intervalMs) / job.clients.length);
  let n = 0;
  let due = nowMs();
  try {
    while (running) {
      const which = (['me', 'history', 'send'] as const)[n % 3] as 'me' | 'history' | 'send';
      const t0 = nowMs();
      try {
        const r =
          which === 'send'
            ? await http.request('POST', send, {
                token: c.token,
                body: { content: `healthy ${index} #${n}` },
              })
            : await http.request('GET', which === 'me' ? me : history, { token: c.token });
        const ms = nowMs() - t0;
        if (r.status === 200) {
          latencies.push(ms);
          at.push(t0);
          byKind[which]?.push(ms);
          if (which === 'send') acked.push({ id: r.body.id as number, channelId: c.channelId });
        } else {
          unexpected.push(`${which} → ${r.status} ${r.raw.slice(0, 200)}`);
        }
      } catch (err) {
        unexpected.push(`${which} → ${String(err)}`);
      }
      n += 1;
      due += job.intervalMs;
      const wait = due - nowMs();
      if (wait > 0) await sleep(wait);
      else due = nowMs(); // behind: do not burst to catch up (the buckets would refuse it)
    }
  } finally {
    http.close();
  }
}

const all = Promise.all(job.clients.map((c, i) => client(c, i)));

process.on('message', (m: { k: string }) => {
  if (m.k !== 'stop') return;
  running = false;
  void all.then(() => {
    const result: HealthyResult = { k: 'result', latencies, at, byKind, acked, unexpected };
    process.send?.(result, () => process.exit(0));
  });
});
process.on('disconnect', () => process.exit(0));
process.send?.({ k: 'up' });
