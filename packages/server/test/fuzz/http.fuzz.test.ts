import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/storage/db.js';
import {
  ADMIN_TOKEN,
  createHarness,
  makeWorld,
  type Harness,
  type Reply,
  type World,
} from '../helpers/harness.js';

// Issue #10, "What to build" 1: a fuzz suite driven by the server's own OpenAPI document. Every
// route of /api/v1, /admin/v1 and /app/v1 (whatever the document lists: no route is hard-coded)
// gets PARLEY_FUZZ_RUNS generated requests (1,000 by default, in CI) with random and boundary
// values for every path, query and body field, wrong types, unknown fields, huge and empty values,
// odd Unicode, wrong content types and credentials. For each answer:
// - never a 500 (or any 5xx);
// - every error is in the D5 form `{"error":{"code","message",…}}` with an X-Request-Id;
// - a 4xx changes nothing: SQLite's total_changes() counter must not move (any write at all,
//   even of an equal value), and when it does (a write a 4xx may legitimately make, e.g. a
//   session's last use) a digest of every table, minus those fields, must be unchanged;
// - the process still answers /healthz.
// Counts of requests and of distinct status codes are printed.

const RUNS = Number(process.env['PARLEY_FUZZ_RUNS'] ?? 1000);
const PREFIXES = ['/api/v1/', '/admin/v1/', '/app/v1/'];
/** fields a refused request may still write (bookkeeping, not state): table → columns, or '*' */
const VOLATILE: Record<string, string[] | '*'> = {
  user_sessions: ['last_used_at'],
  login_failures: '*',
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON Schema / OpenAPI objects
type Json = any;

interface Route {
  method: string;
  path: string; // OpenAPI form: /api/v1/channels/{channelId}/messages
  params: Array<{ name: string; in: 'path' | 'query'; schema: Json }>;
  body: Json; // undefined when the route takes no JSON body
  bodyTypes: string[];
}

function routesOf(doc: Json): Route[] {
  const out: Route[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    if (!PREFIXES.some((p) => path.startsWith(p))) continue;
    for (const [method, op] of Object.entries<Json>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const content = op.requestBody?.content ?? {};
      out.push({
        method: method.toUpperCase(),
        path,
        params: (op.parameters ?? []).filter((p: Json) => p.in === 'path' || p.in === 'query'),
        body: content['application/json']?.schema,
        bodyTypes: Object.keys(content),
      });
    }
  }
  return out;
}

// --- value generators -------------------------------------------------------------------------

const oddStrings = fc.constantFrom(
  '',
  ' ',
  '0',
  '-1',
  '01',
  '1e3',
  '0x10',
  '9007199254740991',
  '9007199254740992',
  '18446744073709551616',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  '%00',
  '..%2f..%2fetc%2fpasswd',
  '\u0000',
  '\u202Eevil',
  '\uFEFF',
  '\uD800',
  '👋🏽‍🔥',
  'a'.repeat(5000),
  '<script>alert(1)</script>',
  "'; drop table users; --",
  'javascript:alert(1)',
  'https://example.com/a.png',
  'http://parley.test/cdn/files/1/a.png',
);

const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  fc.jsonValue({ maxDepth: 3 }),
  oddStrings,
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 2 ** 53, 2 ** 53 - 1, -(2 ** 53), 1e308, 4294967296, 0.5),
  fc.string({ unit: 'grapheme', maxLength: 64 }),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.constantFrom(null, true, false, [], {}),
);

/** A value for `schema`: often plausible (so requests get past validation), often not. */
function valueFor(schema: Json, ids: number[], depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return anyJson;
  const idArb = fc.constantFrom(...ids);
  const variants: fc.Arbitrary<unknown>[] = [anyJson];
  if (schema.anyOf || schema.oneOf)
    for (const s of schema.anyOf ?? schema.oneOf) variants.push(valueFor(s, ids, depth + 1));
  switch (schema.type) {
    case 'string': {
      if (typeof schema.format === 'string' && schema.format.startsWith('parley'))
        variants.push(idArb.map(String), fc.constant('0'));
      if (schema.format === 'uri' || schema.pattern?.includes('[Hh][Tt]'))
        variants.push(fc.webUrl(), fc.constantFrom('javascript:alert(1)', 'data:,x', 'ftp://x/'));
      if (Array.isArray(schema.enum)) variants.push(fc.constantFrom(...schema.enum));
      const max = Math.min(schema.maxLength ?? 40, 300);
      variants.push(
        fc.string({ minLength: schema.minLength ?? 0, maxLength: max }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
        fc.constant('x'.repeat((schema.maxLength ?? 100) + 1)),
      );
      break;
    }
    case 'integer':
    case 'number':
      variants.push(
        idArb,
        fc.integer({ min: schema.minimum ?? -5, max: schema.maximum ?? 2 ** 31 }),
        fc.constantFrom(schema.minimum ?? 0, schema.maximum ?? 0, (schema.maximum ?? 0) + 1, -1),
      );
      break;
    case 'boolean':
      variants.push(fc.boolean());
      break;
    case 'array':
      variants.push(fc.array(valueFor(schema.items, ids, depth + 1), { maxLength: 5 }));
      break;
    case 'object': {
      const props = Object.entries<Json>(schema.properties ?? {});
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of props) record[k] = valueFor(s, ids, depth + 1);
      variants.push(
        fc.record(record, { requiredKeys: schema.required ?? [] }),
        fc.record(record, { requiredKeys: [] }),
        // unknown fields next to plausible ones
        fc
          .tuple(
            fc.record(record, { requiredKeys: [] }),
            fc.dictionary(fc.string(), anyJson, { maxKeys: 3 }),
          )
          .map(([a, b]) => ({ ...b, ...a, ['x-unknown']: 1 })),
      );
      break;
    }
  }
  return fc.oneof(...variants);
}

/** A generated value as query/path text (objects as JSON: some have no prototype to print with). */
const text = (v: unknown): string =>
  typeof v === 'string' ? v : (JSON.stringify(v) ?? 'undefined');

/** encodeURIComponent, or raw invalid UTF-8 for strings it cannot encode (lone surrogates) */
const enc = (v: string): string => {
  try {
    return encodeURIComponent(v);
  } catch {
    return '%ED%A0%80';
  }
};

const pathValue = (schema: Json, ids: number[]): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...ids).map(String) },
    { weight: 2, arbitrary: fc.nat().map(String) },
    { weight: 1, arbitrary: oddStrings.map((s) => (s === '' ? '%20' : enc(s))) },
    { weight: 1, arbitrary: valueFor(schema, ids).map((v) => enc(text(v))) },
  );

interface Gen {
  url: string;
  headers: Record<string, string>;
  payload: string | undefined;
}

function requestArb(r: Route, ids: number[], tokens: string[]): fc.Arbitrary<Gen> {
  const pathParams = r.params.filter((p) => p.in === 'path');
  const queryParams = r.params.filter((p) => p.in === 'query');
  const pathArb = fc.tuple(...pathParams.map((p) => pathValue(p.schema, ids)));
  const queryArb = fc.tuple(
    ...queryParams.map((p) =>
      fc.option(
        fc.oneof(
          valueFor(p.schema, ids).map((v) => text(v)),
          oddStrings,
        ),
        { nil: undefined },
      ),
    ),
    fc.option(fc.tuple(fc.constantFrom('token', 'x', 'limit', 'q', ''), oddStrings), {
      nil: undefined,
    }),
  );
  const bodyArb: fc.Arbitrary<string | undefined> = fc.oneof(
    { weight: 6, arbitrary: valueFor(r.body, ids).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', '{', '{"a":', 'null', '[1,2', '\u0000', 'x'.repeat(70_000)),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  );
  const typeArb = fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        undefined,
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/xml',
        '*/*',
        'garbage',
      ),
    },
  );
  const authArb = fc.oneof(
    // mostly the credentials the route's surface takes, sometimes another surface's
    {
      weight: 6,
      arbitrary: fc.constantFrom(...(r.path.startsWith('/admin/') ? [ADMIN_TOKEN] : tokens)),
    },
    { weight: 1, arbitrary: fc.constantFrom(...tokens, ADMIN_TOKEN) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, 'not-a-token', 'Bearer', 'a.b.c', '') },
  );
  return fc
    .tuple(pathArb, queryArb, bodyArb, typeArb, authArb)
    .map(([pv, qv, body, type, auth]) => {
      let i = 0;
      const path = r.path.replace(/\{[^}]+\}/g, () => pv[i++] ?? '1');
      const q: string[] = [];
      queryParams.forEach((p, j) => {
        const v = qv[j] as string | undefined;
        if (v !== undefined) q.push(`${enc(p.name)}=${enc(v)}`);
      });
      const extra = qv[queryParams.length] as [string, string] | undefined;
      if (extra) q.push(`${enc(extra[0])}=${enc(extra[1])}`);
      const headers: Record<string, string> = {};
      if (auth !== undefined) headers['authorization'] = auth === '' ? 'Bearer ' : `Bearer ${auth}`;
      const withBody = r.method !== 'GET' && body !== undefined;
      if (withBody && type !== undefined) headers['content-type'] = type;
      return {
        url: q.length ? `${path}?${q.join('&')}` : path,
        headers,
        payload: withBody ? body : undefined,
      };
    });
}

// --- state digest -------------------------------------------------------------------------------

async function totalChanges(h: Harness): Promise<number> {
  const r = await sql<{ n: number }>`select total_changes() as n`.execute(h.services.domain.db);
  return Number(r.rows[0]?.n);
}

async function digest(h: Harness): Promise<string> {
  const db = h.services.domain.db;
  // Tables and FTS5's shadow tables (D67's search index: some are WITHOUT ROWID); the virtual
  // table itself is read through its shadows.
  const tables = await sql<{ name: string }>`
    select name from pragma_table_list
    where schema = 'main' and type in ('table', 'shadow') and name not like 'sqlite_%'
    order by name`.execute(db);
  const hash = createHash('sha256');
  for (const { name } of tables.rows) {
    const volatile = VOLATILE[name];
    if (volatile === '*') continue;
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db);
    hash.update(name);
    const lines = rows.rows.map((row) => {
      for (const col of volatile ?? []) delete row[col];
      return JSON.stringify(row, (_k, v: unknown) =>
        v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v,
      );
    });
    for (const line of lines.sort()) hash.update(line);
  }
  return hash.digest('hex');
}

// --- the suite ----------------------------------------------------------------------------------

describe('HTTP fuzz over the OpenAPI document [sqlite]', () => {
  let h: Harness;
  let w: World;
  let routes: Route[] = [];
  const statuses = new Map<number, number>();
  let requests = 0;
  const started = Date.now();

  beforeAll(async () => {
    // private webhook targets allowed: random host names are then never looked up (loopback only)
    h = await createHarness({ env: { PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    w = await makeWorld(h);
    routes = routesOf(await h.app.openApiDocument());
  });
  afterAll(async () => {
    const codes = [...statuses.entries()].sort((a, b) => a[0] - b[0]);
    console.log(
      `HTTP fuzz: ${requests} requests over ${routes.length} routes in ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s; ${codes.length} distinct statuses: ` +
        codes.map(([s, n]) => `${s}×${n}`).join(' '),
    );
    await h?.close();
  });

  it('the document lists the routes to fuzz', () => {
    expect(routes.length).toBeGreaterThan(20);
    for (const p of ['/api/v1/', '/admin/v1/'])
      expect(
        routes.some((r) => r.path.startsWith(p)),
        p,
      ).toBe(true);
  });

  it('every route: no 5xx, the D5 form on every error, no state change on any 4xx, still alive', async () => {
    const ids = [w.guildId, w.channelId, w.owner.id, w.human.id, w.bot.id, w.bot.userId, 1];
    const tokens: string[] = [];
    let known = await digest(h);
    let changes = await totalChanges(h);
    for (const r of routes) {
      // Fresh credentials for every route: an earlier route may have reset the bot's token,
      // ended the people's sessions or disabled them (all legitimate 2xx changes).
      for (const u of [w.owner, w.human]) {
        await h.request({
          method: 'PATCH',
          url: `/admin/v1/users/${u.id}`,
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ disabled: false }),
        });
        const session = await h.admin.post(`/users/${u.id}/sessions`);
        if (session.status === 201) u.token = session.body.token;
      }
      const reset = await h.admin.post(`/bots/${w.bot.id}/token`);
      if (reset.status === 200) w.bot.token = reset.body.token;
      tokens.splice(0, tokens.length, w.bot.token, w.human.token, w.owner.token);
      known = await digest(h);
      changes = await totalChanges(h);
      await fc.assert(
        fc.asyncProperty(requestArb(r, ids, tokens), async (g) => {
          const res: Reply = await h.request({
            method: r.method,
            url: g.url,
            headers: g.headers,
            ...(g.payload !== undefined ? { payload: g.payload } : {}),
          });
          requests++;
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const what = `${r.method} ${g.url} ${JSON.stringify(g.headers)} ${String(g.payload).slice(0, 200)} → ${res.status} ${res.raw.slice(0, 300)}`;
          expect(res.status, what).toBeLessThan(500);
          const after = await totalChanges(h);
          if (res.status >= 400) {
            expect(res.headers['content-type'], what).toMatch(/^application\/json/);
            expect(Object.keys(res.body ?? {}), what).toEqual(['error']);
            expect(typeof res.body.error.code, what).toBe('string');
            expect(typeof res.body.error.message, what).toBe('string');
            expect(res.headers['x-request-id'], what).toMatch(/^[0-9a-f-]{36}$/);
            if (after !== changes) {
              // something was written: only volatile bookkeeping may differ
              expect(await digest(h), `state changed by a ${res.status}: ${what}`).toBe(known);
            }
          } else if (after !== changes) {
            known = await digest(h);
          }
          changes = after;
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    }
    const alive = await h.request({ method: 'GET', url: '/healthz' });
    expect(alive.status).toBe(200);
    expect(requests).toBeGreaterThanOrEqual(routes.length * RUNS);
  }, 3_600_000);
});
