import Fastify from 'fastify';
import type { Pool, PoolClient } from 'pg';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * The floor of the send benchmark (issue 15): the least a durable `POST /channels/:id/messages`
 * can cost on this stack and this machine. It does only what no implementation of a send can
 * skip — parse and validate the body, look the bearer token up in memory, write the message row,
 * its event row and the sender's daily count (the three rows a Parley send writes, with the same
 * columns and indexes: storage/migrations), commit durably, and answer with the message — and
 * nothing a real server must also do (permissions, mentions, the recipients of the event, the
 * fan-out, rate limits, metrics, logs). Whatever the floor reaches against hello-world, Parley
 * cannot beat on the same machine; how far Parley is from it is what is left to win.
 *
 * Modes (argv[3]):
 * - `sqlite`: better-sqlite3 (WAL, synchronous NORMAL, as Parley), transactions grouped per turn
 *   of the event loop (as Parley's group commit, without its savepoints);
 * - `sqlite-search`: the same, and the message's row in a full-text index in the same
 *   transaction, as D67 asks of every send since (an FTS5 table made as Parley's, storage/
 *   migrations/0055-search.ts, fed the raw content: no word splitting of Parley's own). Issue 15
 *   defined the floor before D67; this one is the least a send costs under today's decisions;
 * - `pg`: one transaction per request on a pool of 10 (BEGIN, three writes, COMMIT), as Parley's
 *   send on PostgreSQL;
 * - `pg-batch`: the requests of one turn of the loop written by one transaction of three
 *   multi-row statements: the floor of any batching design on PostgreSQL.
 * argv[4]: the SQLite file, or the PostgreSQL URL (its schema must exist and be empty).
 *
 * Sockets: WebSocket clients of `/gateway` (no protocol: no HELLO, no heartbeat) receive every
 * message as a dispatch frame once it has committed — one string per socket, built from one
 * serialization with only `s` differing, and one write per socket for all the messages of a loop
 * turn (corked): the least a fan-out to N connected bots costs.
 */
const port = Number(process.argv[2] ?? '0');
const mode = process.argv[3] ?? 'sqlite';
const target = process.argv[4] ?? ':memory:';

interface Send {
  readonly id: number;
  readonly channelId: number;
  readonly authorId: number;
  readonly content: string;
  readonly createdAt: number;
  readonly event: string;
  readonly day: number;
}

const TABLES = [
  'create table messages (id bigint primary key, channel_id bigint not null, guild_id bigint, ' +
    'author_id bigint not null, content text not null, msg_type integer not null, ' +
    'created_at bigint not null, edited_at bigint)',
  'create index messages_channel on messages (channel_id, id)',
  'create table upload_usage_daily (user_id bigint not null, day integer not null, ' +
    'bytes_used bigint not null default 0, messages_sent bigint not null default 0, ' +
    'primary key (user_id, day))',
];
const EVENT_LOG = {
  sqlite:
    'create table event_log (pos integer primary key autoincrement, xid bigint not null, ' +
    'type text not null, data text not null, recipients bigint not null, created_at bigint not null)',
  pg:
    'create table event_log (pos bigserial primary key, xid bigint not null default (pg_current_xact_id()::text::bigint), ' +
    'type text not null, data text not null, recipients bigint not null, created_at bigint not null)',
};
const EVENT_INDEXES = [
  'create index event_log_order on event_log (xid, pos)',
  'create index event_log_created on event_log (created_at)',
];
const COUNT_SQL =
  'insert into upload_usage_daily (user_id, day, bytes_used, messages_sent) values ($1, $2, 0, 1) ' +
  'on conflict (user_id, day) do update set messages_sent = upload_usage_daily.messages_sent + 1';
const MESSAGE_SQL =
  'insert into messages (id, channel_id, guild_id, author_id, content, msg_type, created_at) ' +
  'values ($1, $2, $3, $4, $5, 0, $6)';
const EVENT_SQL =
  'insert into event_log (type, data, recipients, created_at) values ($1, $2, 1, $3)';

type Writer = (send: Send) => Promise<void>;

/** D67's index, as Parley's migration makes it (contentless, rows deletable by rowid). */
const SEARCH_INDEX =
  "create virtual table messages_fts using fts5(text, content = '', contentless_delete = 1, " +
  "tokenize = 'unicode61 remove_diacritics 0')";

async function sqliteWriter(search: boolean): Promise<Writer> {
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(target);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  for (const t of [...TABLES, EVENT_LOG.sqlite, ...EVENT_INDEXES]) db.exec(t);
  if (search) db.exec(SEARCH_INDEX);
  const index = search ? db.prepare('insert into messages_fts (rowid, text) values (?, ?)') : null;
  const q = (s: string) => db.prepare(s.replace(/\$\d/g, '?'));
  const message = q(MESSAGE_SQL);
  const event = db.prepare(
    'insert into event_log (xid, type, data, recipients, created_at) values (0, ?, ?, 1, ?)',
  );
  const count = q(COUNT_SQL);
  const writeAll = db.transaction((batch: Send[]) => {
    for (const s of batch) {
      message.run(s.id, s.channelId, 1, s.authorId, s.content, s.createdAt);
      event.run('MESSAGE_CREATE', s.event, s.createdAt);
      count.run(s.authorId, s.day);
      index?.run(s.id, s.content);
    }
  });
  return grouped((batch) => {
    writeAll.immediate(batch);
    return Promise.resolve();
  });
}

async function pgPool() {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: target, max: 10 });
  for (const t of [...TABLES, EVENT_LOG.pg, ...EVENT_INDEXES]) await pool.query(t);
  return pool;
}

/** BEGIN, the writes, COMMIT on one pooled connection (ROLLBACK if a write fails). */
async function inTransaction(pool: Pool, writes: (c: PoolClient) => Promise<void>) {
  const c = await pool.connect();
  try {
    await c.query('begin');
    await writes(c);
    await c.query('commit');
  } catch (err) {
    await c.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

async function pgWriter(): Promise<Writer> {
  const pool = await pgPool();
  return (s) =>
    inTransaction(pool, async (c) => {
      await c.query(MESSAGE_SQL, [s.id, s.channelId, 1, s.authorId, s.content, s.createdAt]);
      await c.query(EVENT_SQL, ['MESSAGE_CREATE', s.event, s.createdAt]);
      await c.query(COUNT_SQL, [s.authorId, s.day]);
    });
}

async function pgBatchWriter(): Promise<Writer> {
  const pool = await pgPool();
  return grouped((batch) =>
    inTransaction(pool, async (c) => {
      await c.query(
        'insert into messages (id, channel_id, guild_id, author_id, content, msg_type, created_at) ' +
          'select id, channel_id, guild_id, author_id, content, 0, $6::bigint ' +
          'from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[]) ' +
          'as t(id, channel_id, guild_id, author_id, content)',
        [
          batch.map((s) => s.id),
          batch.map((s) => s.channelId),
          batch.map(() => 1),
          batch.map((s) => s.authorId),
          batch.map((s) => s.content),
          batch[0]?.createdAt ?? 0,
        ],
      );
      await c.query(
        'insert into event_log (type, data, recipients, created_at) ' +
          "select 'MESSAGE_CREATE', d, 1, $2 from unnest($1::text[]) d",
        [batch.map((s) => s.event), batch[0]?.createdAt ?? 0],
      );
      // One row per author and day: a batch may hold several sends of one author.
      const per = new Map<number, number>();
      for (const s of batch) per.set(s.authorId, (per.get(s.authorId) ?? 0) + 1);
      await c.query(
        'insert into upload_usage_daily (user_id, day, bytes_used, messages_sent) ' +
          'select u, $3, 0, n from unnest($1::bigint[], $2::bigint[]) t(u, n) ' +
          'on conflict (user_id, day) do update set messages_sent = upload_usage_daily.messages_sent + excluded.messages_sent',
        [[...per.keys()], [...per.values()], batch[0]?.day ?? 0],
      );
    }),
  );
}

/** The sends of one turn of the loop share one transaction; the next group waits for it. */
function grouped(write: (batch: Send[]) => Promise<void>): Writer {
  let pending: Array<{ s: Send; done: (err?: Error) => void }> = [];
  let busy = false;
  const flush = async (): Promise<void> => {
    busy = true;
    const jobs = pending;
    pending = [];
    try {
      await write(jobs.map((j) => j.s));
      for (const j of jobs) j.done();
    } catch (err) {
      for (const j of jobs) j.done(err instanceof Error ? err : new Error(String(err)));
    }
    busy = false;
    if (pending.length > 0) setImmediate(() => void flush());
  };
  return (s) =>
    new Promise<void>((resolve, reject) => {
      pending.push({ s, done: (err) => (err === undefined ? resolve() : reject(err)) });
      if (pending.length === 1 && !busy) setImmediate(() => void flush());
    });
}

const writer =
  mode === 'sqlite' || mode === 'sqlite-search'
    ? await sqliteWriter(mode === 'sqlite-search')
    : mode === 'pg'
      ? await pgWriter()
      : await pgBatchWriter();

// Any bearer token is someone: a token table in memory is the least a real server does.
const users = new Map<string, number>();
let lastMs = 0;
let seq = 0;
const app = Fastify({ logger: false });
const sockets = new Map<WebSocket, { s: number }>();
const gateway = new WebSocketServer({ server: app.server, path: '/gateway' });
// The messages committed in one turn of the loop go out together: one write per socket.
let committed: string[] = [];
const fanOut = (): void => {
  const batch = committed;
  committed = [];
  for (const [ws, session] of sockets) {
    const socket = (ws as unknown as { _socket: import('node:net').Socket })._socket;
    socket.cork();
    for (const data of batch)
      ws.send(`{"op":0,"t":"MESSAGE_CREATE","s":${++session.s},"d":${data}}`);
    socket.uncork();
  }
};
gateway.on('connection', (ws) => {
  sockets.set(ws, { s: 0 });
  ws.on('close', () => sockets.delete(ws));
});
app.post<{ Params: { channelId: string }; Body: { content: string } }>(
  '/api/v1/channels/:channelId/messages',
  {
    schema: {
      params: {
        type: 'object',
        properties: { channelId: { type: 'string', pattern: '^[0-9]{1,16}$' } },
        required: ['channelId'],
      },
      body: {
        type: 'object',
        properties: { content: { type: 'string', minLength: 1, maxLength: 2000 } },
        required: ['content'],
        additionalProperties: false,
      },
      response: {
        200: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            channel_id: { type: 'string' },
            author_id: { type: 'string' },
            content: { type: 'string' },
            timestamp: { type: 'string' },
          },
        },
      },
    },
  },
  async (req, reply) => {
    const token = req.headers.authorization ?? '';
    let authorId = users.get(token);
    if (authorId === undefined) users.set(token, (authorId = users.size + 1));
    const now = Date.now();
    seq = now === lastMs ? seq + 1 : 0;
    lastMs = now;
    const id = (now - 1_700_000_000_000) * 4096 + seq;
    const message = {
      id: String(id),
      channel_id: req.params.channelId,
      author_id: String(authorId),
      content: req.body.content,
      timestamp: new Date(now).toISOString(),
    };
    const data = JSON.stringify(message);
    await writer({
      id,
      channelId: Number(req.params.channelId),
      authorId,
      content: req.body.content,
      createdAt: now,
      event: data,
      day: Math.floor(now / 86_400_000),
    });
    if (sockets.size > 0) {
      committed.push(data);
      if (committed.length === 1) setImmediate(fanOut);
    }
    return reply.send(message);
  },
);
await app.listen({ host: '127.0.0.1', port });
process.stdout.write('floor server ready\n');
process.once('SIGTERM', () => {
  app
    .close()
    .then(() => process.exit(0))
    .catch(() => process.exit(1));
});
