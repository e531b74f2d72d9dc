import Database from 'better-sqlite3';
import { searchText } from '../packages/server/src/domain/search/search-text.js';
import { SnowflakeGenerator } from '../packages/server/src/ids/snowflake.js';
import { HttpClient } from './lib/http-client.js';
import { loadProblems, runLoad } from './lib/load.js';
import { buildWorld, Operator } from './lib/operator.js';
import { PG_URL, startParley, type ParleyServer } from './lib/parley-server.js';
import { seconds, size } from './lib/sizes.js';
import { round, Samples, summarize, type LatencySummary } from './lib/stats.js';
import type { Benchmark, BenchContext, BenchOutcome, Figure, TableRow } from './lib/types.js';

/**
 * search (D67, issue 26): `GET /api/v1/guilds/:id/messages/search` over 1,000,000 messages in
 * 1,000 channels of one guild, on SQLite (FTS5) and PostgreSQL (GIN): p50 and p99 of a common
 * word, a rare word and a phrase (target p99 ≤ 50 ms on SQLite). The history is written
 * straight into the server's database (the storage layer's own rows: the message and its index
 * entry, as a send writes them), not through HTTP; the channels too (D70 stops a guild at 500
 * channels when they are created through the API — the search reads 1,000 here, a harder case).
 * The send cost of the index is bench/send's Parley ÷ floor before and after (bench/README.md).
 */
const CHANNELS = 1000;
const CONNECTIONS = 1;
/** the vocabulary: w0z … w4999z, drawn with Zipf's law (w0z the most common) */
const VOCAB = 5000;
const COMMON = 'w3z'; // in about a quarter of the messages (a word like "the")
const RARE = 'zyzzyva'; // in exactly RARE_COUNT messages
const RARE_COUNT = 20;
const PHRASE = '"release notes"'; // both words common-ish, adjacent in 0.5 % of messages

function makeText(): (i: number) => string {
  // Zipf weights 1/(r+1), cumulative, for a binary search per word.
  const cum = new Float64Array(VOCAB);
  let sum = 0;
  for (let r = 0; r < VOCAB; r++) cum[r] = sum += 1 / (r + 1);
  let seed = 12345;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const word = (): string => {
    const x = rnd() * sum;
    let lo = 0;
    let hi = VOCAB - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cum[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return `w${lo}z`; // no word is a prefix of another: `w3z*` is w3z alone
  };
  return (i: number) => {
    const n = 6 + Math.floor(rnd() * 10);
    const words: string[] = [];
    for (let k = 0; k < n; k++) words.push(word());
    if (i % 200 === 7) words.splice(2, 0, 'release', 'notes');
    else if (i % 97 === 3) words.push('notes', 'release'); // both words, not the phrase
    return words.join(' ');
  };
}

interface Seeded {
  seconds: number;
  channels: number[];
}

/** The rows a send writes (message; SQLite: its FTS5 row), in big transactions. */
export function seedSqlite(
  dbFile: string,
  guildId: number,
  authorId: number,
  total: number,
  rareEvery: number,
): Seeded {
  const started = performance.now();
  let t = Date.now() - total - 120_000;
  const ids = new SnowflakeGenerator(0, { now: () => t });
  const db = new Database(dbFile);
  const text = makeText();
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 10000');
    db.pragma('synchronous = OFF');
    const channels: number[] = [];
    const addChannel = db.prepare(
      'insert into channels (id, guild_id, type, name, topic, created_at) values (?, ?, 0, ?, ?, ?)',
    );
    db.transaction(() => {
      for (let c = 0; c < CHANNELS; c++) {
        t += 1;
        const id = ids.next();
        channels.push(id);
        addChannel.run(id, guildId, `c${c}`, '', t);
      }
    })();
    const insert = db.prepare(
      `insert into messages (id, channel_id, guild_id, author_id, content, msg_type, created_at, edited_at)
       values (?, ?, ?, ?, ?, 0, ?, null)`,
    );
    const index = db.prepare('insert into messages_fts (rowid, text) values (?, ?)');
    const batch = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        t += 1;
        const id = ids.next();
        let content = text(i);
        if (i % rareEvery === 5) content += ` ${RARE}`;
        insert.run(id, channels[i % CHANNELS], guildId, authorId, content, t);
        index.run(id, searchText(content));
      }
    });
    for (let from = 0; from < total; from += 50_000) batch(from, Math.min(total, from + 50_000));
    db.exec("insert into messages_fts (messages_fts) values ('optimize')");
    db.pragma('wal_checkpoint(TRUNCATE)');
    return { seconds: (performance.now() - started) / 1000, channels };
  } finally {
    db.close();
  }
}

/** PostgreSQL: the same rows, 5,000 a statement (unnest); the row's search vector is generated. */
async function seedPostgres(
  schema: string,
  guildId: number,
  authorId: number,
  total: number,
  rareEvery: number,
  deadline: number,
): Promise<Seeded> {
  const started = performance.now();
  let t = Date.now() - total - 120_000;
  const ids = new SnowflakeGenerator(0, { now: () => t });
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
  await c.connect();
  const text = makeText();
  try {
    const channels: number[] = [];
    for (let k = 0; k < CHANNELS; k++) {
      t += 1;
      channels.push(ids.next());
    }
    await c.query(
      `insert into channels (id, guild_id, type, name, topic, created_at)
       select id, $2, 0, 'c' || n, '', $3 from unnest($1::bigint[]) with ordinality as u(id, n)`,
      [channels, guildId, t],
    );
    // Faster than keeping the index up row by row on a bulk load; built again below.
    await c.query('drop index messages_search');
    await c.query('set synchronous_commit = off');
    const B = 5000;
    for (let from = 0; from < total; from += B) {
      if (performance.now() > deadline) throw new Error('search: PostgreSQL seed ran out of time');
      const idList: number[] = [];
      const chList: number[] = [];
      const texts: string[] = [];
      const times: number[] = [];
      for (let i = from; i < Math.min(total, from + B); i++) {
        t += 1;
        idList.push(ids.next());
        chList.push(channels[i % CHANNELS] as number);
        let content = text(i);
        if (i % rareEvery === 5) content += ` ${RARE}`;
        texts.push(content);
        times.push(t);
      }
      await c.query(
        `insert into messages (id, channel_id, guild_id, author_id, content, msg_type, created_at)
         select id, ch, $3, $4, content, 0, at
         from unnest($1::bigint[], $2::bigint[], $5::text[], $6::bigint[]) as u(id, ch, content, at)`,
        [idList, chList, guildId, authorId, texts, times],
      );
    }
    await c.query("set maintenance_work_mem = '256MB'");
    await c.query('create index messages_search on messages using gin (search_vector)');
    await c.query('analyze messages');
    return { seconds: (performance.now() - started) / 1000, channels };
  } finally {
    await c.end();
  }
}

const QUERIES = [
  { name: 'common word', q: COMMON },
  // the same word finished (a space after it: not a prefix, D67): what the prefix costs
  { name: 'common word whole', q: `${COMMON} ` },
  { name: 'rare word', q: RARE },
  { name: 'phrase', q: PHRASE },
] as const;

export const searchBench: Benchmark = {
  name: 'search',
  title:
    'search over 1,000,000 messages in 1,000 channels: p99 of a word, a rare word, a phrase (SQLite ≤ 50 ms)',
  watchdogS: 1500,
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const total = size(ctx, 1_000_000, 5000, 20_000);
    const roundS = seconds(ctx, 5, 1, 1);
    const rareEvery = Math.floor(total / RARE_COUNT);
    const figures: Figure[] = [];
    const table: TableRow[] = [];
    const warnings: string[] = [];
    const details: Record<string, unknown> = {
      total,
      channels: CHANNELS,
      connections: CONNECTIONS,
    };
    const dialects = ctx.smoke ? (['sqlite'] as const) : (['sqlite', 'postgres'] as const);
    for (const dialect of dialects) {
      const server: ParleyServer = await startParley({
        label: `search server (${dialect})`,
        cpuProfDir: ctx.profileDir,
        postgres: dialect === 'postgres',
      });
      try {
        const op = new Operator(server);
        const world = await buildWorld(op, 1);
        op.close();
        const bot = world.bots[0];
        if (!bot) throw new Error('no bot');
        ctx.log(`search: writing ${total.toLocaleString('en-US')} messages into ${dialect}`);
        const seeded =
          dialect === 'sqlite'
            ? seedSqlite(server.dbFile, world.guildId, bot.userId, total, rareEvery)
            : await seedPostgres(
                server.schema as string,
                world.guildId,
                bot.userId,
                total,
                rareEvery,
                performance.now() + 900_000,
              );
        details[`${dialect}SeedSeconds`] = round(seeded.seconds, 1);
        ctx.log(`search: seeded in ${round(seeded.seconds, 1)} s`);
        const base = `/api/v1/guilds/${world.guildId}/messages/search`;
        const http = new HttpClient(server.origin);
        const totals: Record<string, number | string> = {};
        for (const q of QUERIES) {
          const r = await http.expect('GET', `${base}?q=${encodeURIComponent(q.q)}`, 200, {
            token: bot.token,
          });
          totals[q.name] = `${r.body?.total}${r.body?.totalCapped ? '+' : ''}`;
          if (!(r.body?.total > 0)) throw new Error(`search: "${q.q}" found nothing on ${dialect}`);
        }
        http.close();
        details[`${dialect}Totals`] = totals;
        for (const q of QUERIES) {
          const path = `${base}?q=${encodeURIComponent(q.q)}`;
          const pooled = new Samples();
          await runLoad({
            origin: server.origin,
            path,
            headers: { authorization: `Bearer ${bot.token}` },
            connections: CONNECTIONS,
            durationS: ctx.smoke ? 0.2 : 1,
          });
          // Pages from everywhere in the first 1,000 hits, as a person paging would ask.
          const res = await runLoad({
            origin: server.origin,
            path,
            headers: { authorization: `Bearer ${bot.token}` },
            connections: CONNECTIONS,
            // smoke: a handful of answers whatever the machine's load (a figure, not NaN)
            ...(ctx.smoke ? { amount: 5, maxS: 60 } : { durationS: roundS }),
            pathFor: () => `${path}&offset=${25 * Math.floor(Math.random() * 4)}`,
            into: pooled,
          });
          const p = loadProblems(res, `${dialect} ${q.name}`);
          if (p) warnings.push(p);
          const s: LatencySummary = summarize(pooled.values());
          const id = `${dialect === 'sqlite' ? 'sqlite' : 'pg'}_${q.name.replaceAll(' ', '_')}`;
          figures.push(
            {
              id: `${id}_p50`,
              label: `${dialect} ${q.name} p50`,
              value: round(s.p50, 2),
              unit: 'ms',
            },
            {
              id: `${id}_p99`,
              label: `${dialect} ${q.name} p99`,
              value: round(s.p99, 2),
              unit: 'ms',
              ...(dialect === 'sqlite' ? { target: { op: '<=', value: 50 } as const } : {}),
            },
          );
          table.push({
            dialect,
            query: q.q.endsWith(' ') ? `${q.q.trimEnd()}␠` : q.q,
            hits: totals[q.name] ?? '',
            requests: s.count,
            'p50 ms': round(s.p50, 2),
            'p99 ms': round(s.p99, 2),
            'max ms': round(s.max, 2),
          });
        }
      } finally {
        await server.dispose();
      }
    }
    return { status: 'ok', figures, table, warnings, details };
  },
};
