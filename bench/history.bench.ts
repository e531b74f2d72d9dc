import { HttpClient } from './lib/http-client.js';
import { loadProblems, runLoad } from './lib/load.js';
import { buildWorld, Operator } from './lib/operator.js';
import { startParley, type ParleyServer } from './lib/parley-server.js';
import { seedMessages } from './lib/seed-messages.js';
import { seconds, size } from './lib/sizes.js';
import { round, Samples, summarize, type LatencySummary } from './lib/stats.js';
import type { Benchmark, BenchContext, BenchOutcome, Figure } from './lib/types.js';

/**
 * history: GET /channels/:id/messages?before=<random cursor>&limit=50 on a channel with
 * 1,000,000 messages, against the same request on a 1,000-message channel of the same server
 * (the baseline). D16 pages are range scans on (channel_id, id), so the ratio should stay near 1.
 * Target: ratio ≤ 1.5 for p50 and p99.
 */
const SMALL = 1000;
const LIMIT = 50;
const CONNECTIONS = 4;

export const historyBench: Benchmark = {
  name: 'history',
  title: 'message history pages on a 1,000,000-message channel vs a 1,000-message one (≤ 1.5)',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const big = size(ctx, 1_000_000, 5000, 20_000);
    const roundS = seconds(ctx, 4, 0.5, 1);
    const rounds = ctx.smoke ? 1 : 2;
    // Set-up through the operator API; then the history is written straight into the running
    // server's SQLite file (WAL: one more writer while the server idles), with ids below every
    // id the server has issued or will issue.
    const server: ParleyServer = await startParley({
      label: 'history server',
      cpuProfDir: ctx.profileDir,
    });
    try {
      const op = new Operator(server);
      const world = await buildWorld(op, 1);
      const smallChannel = await op.channel(world.guildId, 'small');
      op.close();
      const bot = world.bots[0];
      if (!bot) throw new Error('no bot');

      ctx.log(`history: writing ${big.toLocaleString('en-US')} + ${SMALL} messages into SQLite`);
      const seeded = seedMessages(server.dbFile, {
        guildId: world.guildId,
        authorId: bot.userId,
        channels: [
          { channelId: world.channelId, count: big },
          { channelId: smallChannel, count: SMALL },
        ],
      });

      const cases = [
        { name: 'small', channelId: smallChannel, count: SMALL },
        { name: 'big', channelId: world.channelId, count: big },
      ] as const;
      const http = new HttpClient(server.origin);
      for (const c of cases) {
        const r = await http.expect(
          'GET',
          `/api/v1/channels/${c.channelId}/messages?limit=${LIMIT}`,
          200,
          {
            token: bot.token,
          },
        );
        if (r.body?.messages?.length !== LIMIT)
          throw new Error(
            `the ${c.name} channel answered ${r.body?.messages?.length} messages, not ${LIMIT}`,
          );
      }
      http.close();

      const load = (c: (typeof cases)[number], durationS: number, into?: Samples) => {
        const ids = seeded.ids.get(c.channelId) as Float64Array;
        const base = `/api/v1/channels/${c.channelId}/messages`;
        return runLoad({
          origin: server.origin,
          path: base,
          headers: { authorization: `Bearer ${bot.token}` },
          connections: CONNECTIONS,
          durationS,
          // A random position in the whole history, so pages come from everywhere in it.
          pathFor: () =>
            `${base}?before=${ids[Math.floor(Math.random() * ids.length)]}&limit=${LIMIT}`,
          ...(into ? { into } : {}),
        });
      };
      ctx.log('history: warming up');
      for (const c of cases) await load(c, ctx.smoke ? 0.2 : 1);
      const pooled = { small: new Samples(), big: new Samples() };
      const warnings: string[] = [];
      const perRound: Record<string, number>[] = [];
      // Alternating rounds (small, big, small, big) pooled per channel: drift hits both alike.
      for (let r = 0; r < rounds; r++) {
        for (const c of cases) {
          ctx.log(`history: round ${r + 1}, ${c.name} channel`);
          const res = await load(c, roundS, pooled[c.name]);
          perRound.push({ round: r + 1, [c.name]: Math.round(res.reqPerSec) });
          const p = loadProblems(res, `${c.name} channel`);
          if (p) warnings.push(p);
        }
      }
      const s: LatencySummary = summarize(pooled.small.values());
      const b: LatencySummary = summarize(pooled.big.values());
      const figures: Figure[] = [
        {
          id: 'ratio_p50',
          label: 'p50 big / small channel',
          value: round(b.p50 / s.p50, 3),
          unit: 'x',
          basis: `${round(b.p50, 3)} ms ÷ ${round(s.p50, 3)} ms`,
          target: { op: '<=', value: 1.5 },
        },
        {
          id: 'ratio_p99',
          label: 'p99 big / small channel',
          value: round(b.p99 / s.p99, 3),
          unit: 'x',
          basis: `${round(b.p99, 3)} ms ÷ ${round(s.p99, 3)} ms`,
          target: { op: '<=', value: 1.5 },
        },
        {
          id: 'big_p50',
          label: `p50 on ${big.toLocaleString('en-US')} messages`,
          value: round(b.p50, 3),
          unit: 'ms',
        },
        {
          id: 'big_p99',
          label: `p99 on ${big.toLocaleString('en-US')} messages`,
          value: round(b.p99, 3),
          unit: 'ms',
        },
      ];
      return {
        status: 'ok',
        figures,
        warnings,
        table: cases.map((c) => {
          const x = c.name === 'small' ? s : b;
          return {
            channel: `${c.count.toLocaleString('en-US')} messages`,
            requests: x.count,
            'p50 ms': round(x.p50, 3),
            'p99 ms': round(x.p99, 3),
            'max ms': round(x.max, 3),
          };
        }),
        details: {
          big,
          small: SMALL,
          limit: LIMIT,
          connections: CONNECTIONS,
          rounds,
          roundS,
          seedSeconds: round(seeded.seconds, 1),
          perRound,
          smallLatency: s,
          bigLatency: b,
        },
      };
    } finally {
      await server.dispose();
    }
  },
};
