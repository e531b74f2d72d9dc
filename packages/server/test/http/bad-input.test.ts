import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  createHarness,
  dbDescribe,
  expectStatus,
  makeBot,
  makeUser,
  makeWorld,
  type Harness,
  type Reply,
  type World,
} from '../helpers/harness.js';

// Acceptance 5 (issue 2): bad input on every endpoint is a 4xx in the D5 form with the right
// code (D6), never a 500, and nothing internal leaks. One table; placeholders in `url` ({ch},
// {msg}, {dm}, {dmMsg}, {guild}, {human}, {bot}) are filled from the world at run time.

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
type Code =
  | 'VALIDATION_ERROR'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED';

interface Case {
  name: string;
  method: Method;
  url: string;
  /** JSON-serialized as the body (Content-Type: application/json unless `type` says otherwise) */
  body?: unknown;
  /** sent as is instead of `body` */
  raw?: string;
  /** Content-Type; null: no header at all */
  type?: string | null;
  status: 400 | 404 | 405 | 413 | 415;
  code: Code;
  /** for 400: a `details` entry must name this field */
  field?: string;
}

const MAX = '9007199254740991'; // 2^53−1: well-formed (D4), names nothing → 404
const TOO_BIG = '9007199254740992'; // 2^53 → 400
const EMOJI = '😀';
const BIG = 'a'.repeat(70 * 1024); // a JSON body over 64 KiB (D6)

/** Ids that are not canonical decimal ids ≤ 2^53−1 (D4). */
const BAD_IDS: Array<[string, string]> = [
  ['non-numeric', 'abc'],
  ['negative', '-1'],
  ['zero', '0'],
  ['leading zero', '01'],
  ['exponent', '1e3'],
  ['2^53', TOO_BIG],
  ['fraction', '1.5'],
  ['plus sign', '%2B5'],
  ['hex', '0x10'],
  ['bad percent-encoding', '%ZZ'],
  ['120 digits', '9'.repeat(120)],
];

const V = 'VALIDATION_ERROR' as const;

function idCases(
  what: string,
  method: Method,
  make: (id: string) => string,
  field: string,
  body?: unknown,
): Case[] {
  return BAD_IDS.map(([label, id]) => ({
    name: `${what}: ${label} ${field} → 400`,
    method,
    url: make(id),
    ...(body === undefined ? {} : { body }),
    status: 400 as const,
    code: V,
    // the router refuses these before any parameter is named
    ...(id.startsWith('%') || id.length > 100 ? {} : { field }),
  }));
}

/** The same bad bodies for every content-carrying endpoint (D14, D6). */
function contentCases(what: string, method: Method, url: string, withMsgType: boolean): Case[] {
  const c = (name: string, rest: Omit<Case, 'name' | 'method' | 'url'>): Case => ({
    name: `${what}: ${name}`,
    method,
    url,
    ...rest,
  });
  const out: Case[] = [
    c('missing content → 400', { body: {}, status: 400, code: V, field: 'content' }),
    c('empty content → 400 (D14)', {
      body: { content: '' },
      status: 400,
      code: V,
      field: 'content',
    }),
    c('2001 characters → 400 (D14)', {
      body: { content: 'x'.repeat(2001) },
      status: 400,
      code: V,
      field: 'content',
    }),
    c('2001 emoji (code points) → 400 (D14)', {
      body: { content: EMOJI.repeat(2001) },
      status: 400,
      code: V,
      field: 'content',
    }),
    c('content a number → 400', { body: { content: 123 }, status: 400, code: V, field: 'content' }),
    c('content null → 400', { body: { content: null }, status: 400, code: V, field: 'content' }),
    c('content an array → 400', {
      body: { content: ['hi'] },
      status: 400,
      code: V,
      field: 'content',
    }),
    c('content an object → 400', {
      body: { content: { text: 'hi' } },
      status: 400,
      code: V,
      field: 'content',
    }),
    c('content a boolean → 400', {
      body: { content: true },
      status: 400,
      code: V,
      field: 'content',
    }),
    // Text that no database stores as sent: it would be a 500 on PostgreSQL, or come back
    // changed (D17: the Message is the same wherever it appears).
    c('content with U+0000 → 400', {
      raw: '{"content":"a\\u0000b"}',
      status: 400,
      code: V,
      field: 'content',
    }),
    c('content with an unpaired surrogate → 400', {
      raw: '{"content":"a\\ud800b"}',
      status: 400,
      code: V,
      field: 'content',
    }),
    // the escape in upper case, a lone low half, after an escaped backslash (json-body.ts
    // looks for `\u` in the text before it walks the value)
    c('content with a lone low surrogate, upper-case escape → 400', {
      raw: '{"content":"C:\\\\x \\uDC00"}',
      status: 400,
      code: V,
      field: 'content',
    }),
    c('body a JSON array → 400', { body: [{ content: 'hi' }], status: 400, code: V }),
    c('body a JSON string → 400', { body: 'hi', status: 400, code: V }),
    c('body JSON null → 400', { raw: 'null', status: 400, code: V }),
    c('empty body → 400', { raw: '', status: 400, code: V }),
    c('malformed JSON (truncated) → 400', { raw: '{"content":', status: 400, code: V }),
    c('malformed JSON (single quotes) → 400', { raw: "{content:'hi'}", status: 400, code: V }),
    c('__proto__ key (prototype poisoning) → 400', {
      raw: '{"content":"hi","__proto__":{"x":1}}',
      status: 400,
      code: V,
    }),
    c('body over 64 KiB → 413 (D6)', {
      body: { content: BIG },
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
    }),
    c('Content-Type text/plain with a JSON body → 415 (D6)', {
      raw: '{"content":"hi"}',
      type: 'text/plain',
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    }),
    c('form-urlencoded → 415', {
      raw: 'content=hi',
      type: 'application/x-www-form-urlencoded',
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    }),
    c('JSON body without Content-Type → 415', {
      raw: '{"content":"hi"}',
      type: null,
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    }),
  ];
  if (withMsgType) {
    // D15: msgType is 0–3 as a JSON number; anything else is 400.
    for (const [label, msgType] of [
      ['"0" (a string)', '0'],
      ['1.5', 1.5],
      ['4', 4],
      ['-1', -1],
      ['99 (unknown)', 99],
      ['null', null],
      ['true', true],
    ] as const) {
      out.push(
        c(`msgType ${label} → 400 (D15)`, {
          body: { content: 'hi', msgType },
          status: 400,
          code: V,
          field: 'msgType',
        }),
      );
    }
  }
  return out;
}

/** D16/D20 query values. */
function pageCases(what: string, url: string, maxLimit: number, cursors: string[]): Case[] {
  const out: Case[] = [];
  // Plain decimal integers only: no exponent, sign, hex, padding or leading zero (D16, as D4).
  const notDecimal = ['1e2', '%2B5', '0x10', '%205', '05', '5.0'];
  for (const limit of [
    '0',
    String(maxLimit + 1),
    '1.5',
    'abc',
    '-1',
    '',
    '5&limit=6',
    ...notDecimal,
  ]) {
    out.push({
      name: `${what}: limit=${limit} → 400 (D16: not clamped)`,
      method: 'GET',
      url: `${url}?limit=${limit}`,
      status: 400,
      code: V,
      field: 'limit',
    });
  }
  for (const cursor of cursors) {
    for (const v of ['abc', '-1', '01', '1e3', TOO_BIG, '1.5', '']) {
      out.push({
        name: `${what}: ${cursor}=${v} → 400 (D4)`,
        method: 'GET',
        url: `${url}?${cursor}=${v}`,
        status: 400,
        code: V,
        field: cursor,
      });
    }
  }
  return out;
}

const CASES: Case[] = [
  // GET /bot/me
  {
    name: 'bot/me: POST → 405 (D2)',
    method: 'POST',
    url: '/api/v1/bot/me',
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },
  {
    name: 'bot/me: DELETE → 405 (D2)',
    method: 'DELETE',
    url: '/api/v1/bot/me',
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },
  {
    name: 'bot/me under an unknown version → 404 (D2)',
    method: 'GET',
    url: '/api/v2/bot/me',
    status: 404,
    code: 'NOT_FOUND',
  },

  // Guild messages: send, list, edit, delete
  ...contentCases('send', 'POST', '/api/v1/channels/{ch}/messages', true),
  ...idCases('send', 'POST', (id) => `/api/v1/channels/${id}/messages`, 'channelId', {
    content: 'hi',
  }),
  {
    name: 'send: unknown channel 2^53−1 → 404 (D4)',
    method: 'POST',
    url: `/api/v1/channels/${MAX}/messages`,
    body: { content: 'hi' },
    status: 404,
    code: 'NOT_FOUND',
  },
  ...pageCases('list', '/api/v1/channels/{ch}/messages', 100, ['before', 'after']),
  ...idCases('list', 'GET', (id) => `/api/v1/channels/${id}/messages`, 'channelId'),
  {
    name: 'list: unknown channel → 404',
    method: 'GET',
    url: `/api/v1/channels/${MAX}/messages`,
    status: 404,
    code: 'NOT_FOUND',
  },
  ...contentCases('edit', 'PUT', '/api/v1/channels/{ch}/messages/{msg}', false),
  ...idCases('edit', 'PUT', (id) => `/api/v1/channels/{ch}/messages/${id}`, 'messageId', {
    content: 'hi',
  }),
  {
    name: 'edit: unknown message → 404',
    method: 'PUT',
    url: `/api/v1/channels/{ch}/messages/${MAX}`,
    body: { content: 'hi' },
    status: 404,
    code: 'NOT_FOUND',
  },
  ...idCases('delete', 'DELETE', (id) => `/api/v1/channels/{ch}/messages/${id}`, 'messageId'),
  ...idCases('delete', 'DELETE', (id) => `/api/v1/channels/${id}/messages/{msg}`, 'channelId'),
  {
    name: 'delete: unknown message → 404',
    method: 'DELETE',
    url: `/api/v1/channels/{ch}/messages/${MAX}`,
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'messages: PATCH → 405 (D2)',
    method: 'PATCH',
    url: '/api/v1/channels/{ch}/messages/{msg}',
    body: { content: 'hi' },
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },

  // DM messages (D17: same rules as the guild routes)
  ...contentCases('DM send', 'POST', '/api/v1/dm/channels/{dm}/messages', true),
  ...idCases('DM send', 'POST', (id) => `/api/v1/dm/channels/${id}/messages`, 'channelId', {
    content: 'hi',
  }),
  {
    name: 'DM send: unknown channel → 404',
    method: 'POST',
    url: `/api/v1/dm/channels/${MAX}/messages`,
    body: { content: 'hi' },
    status: 404,
    code: 'NOT_FOUND',
  },
  ...pageCases('DM list', '/api/v1/dm/channels/{dm}/messages', 100, ['before', 'after']),
  ...idCases('DM list', 'GET', (id) => `/api/v1/dm/channels/${id}/messages`, 'channelId'),
  ...contentCases('DM edit', 'PUT', '/api/v1/dm/channels/{dm}/messages/{dmMsg}', false),
  ...idCases('DM edit', 'PUT', (id) => `/api/v1/dm/channels/{dm}/messages/${id}`, 'messageId', {
    content: 'hi',
  }),
  ...idCases('DM delete', 'DELETE', (id) => `/api/v1/dm/channels/{dm}/messages/${id}`, 'messageId'),
  {
    name: 'DM delete: unknown message → 404',
    method: 'DELETE',
    url: `/api/v1/dm/channels/{dm}/messages/${MAX}`,
    status: 404,
    code: 'NOT_FOUND',
  },

  // Channels
  ...idCases('channel list', 'GET', (id) => `/api/v1/guilds/${id}/channels`, 'guildId'),
  {
    name: 'channel list: unknown guild → 404',
    method: 'GET',
    url: `/api/v1/guilds/${MAX}/channels`,
    status: 404,
    code: 'NOT_FOUND',
  },
  ...idCases('channel read', 'GET', (id) => `/api/v1/channels/${id}`, 'channelId'),
  {
    name: 'channel read: unknown channel → 404',
    method: 'GET',
    url: `/api/v1/channels/${MAX}`,
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'channel read: POST → 405',
    method: 'POST',
    url: '/api/v1/channels/{ch}',
    body: {},
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },

  // Members
  ...pageCases('member list', '/api/v1/guilds/{guild}/members', 1000, ['after']),
  ...idCases('member list', 'GET', (id) => `/api/v1/guilds/${id}/members`, 'guildId'),
  {
    name: 'member list: unknown guild → 404',
    method: 'GET',
    url: `/api/v1/guilds/${MAX}/members`,
    status: 404,
    code: 'NOT_FOUND',
  },
  ...idCases('member read', 'GET', (id) => `/api/v1/guilds/{guild}/members/${id}`, 'userId'),
  ...idCases('member read', 'GET', (id) => `/api/v1/guilds/${id}/members/{human}`, 'guildId'),
  {
    name: 'member read: unknown user → 404 (D20)',
    method: 'GET',
    url: `/api/v1/guilds/{guild}/members/${MAX}`,
    status: 404,
    code: 'NOT_FOUND',
  },

  // DM open
  ...idCases('DM open', 'POST', (id) => `/api/v1/users/${id}/dm`, 'userId'),
  {
    name: 'DM open: unknown user → 404 (D21)',
    method: 'POST',
    url: `/api/v1/users/${MAX}/dm`,
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'DM open: GET → 405',
    method: 'GET',
    url: '/api/v1/users/{human}/dm',
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },

  // Unknown routes (D2)
  {
    name: 'unknown API route → 404',
    method: 'GET',
    url: '/api/v1/nope',
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'unknown nested route → 404',
    method: 'GET', // D63 made /pins a route: an unknown nested one is still 404
    url: '/api/v1/channels/{ch}/threads',
    status: 404,
    code: 'NOT_FOUND',
  },

  // Operator API (D41: same error form and id rules)
  {
    name: 'admin users: missing name → 400',
    method: 'POST',
    url: '/admin/v1/users',
    body: {},
    status: 400,
    code: V,
    field: 'name',
  },
  {
    name: 'admin users: empty name → 400',
    method: 'POST',
    url: '/admin/v1/users',
    body: { name: '' },
    status: 400,
    code: V,
    field: 'name',
  },
  {
    name: 'admin users: 101-character name → 400',
    method: 'POST',
    url: '/admin/v1/users',
    body: { name: 'n'.repeat(101) },
    status: 400,
    code: V,
    field: 'name',
  },
  {
    name: 'admin users: name a number → 400',
    method: 'POST',
    url: '/admin/v1/users',
    body: { name: 7 },
    status: 400,
    code: V,
    field: 'name',
  },
  {
    name: 'admin users: name with U+0000 → 400',
    method: 'POST',
    url: '/admin/v1/users',
    raw: '{"name":"a\\u0000"}',
    status: 400,
    code: V,
    field: 'name',
  },
  {
    name: 'admin users: name null → 400',
    method: 'POST',
    url: '/admin/v1/users',
    body: { name: null },
    status: 400,
    code: V,
    field: 'name',
  },
  {
    name: 'admin users: short password → 400',
    method: 'POST',
    url: '/admin/v1/users',
    body: { name: 'a', password: 'short' },
    status: 400,
    code: V,
    field: 'password',
  },
  {
    name: 'admin users: avatar not a URL → 400',
    method: 'POST',
    url: '/admin/v1/users',
    body: { name: 'a', avatar: 'not a url' },
    status: 400,
    code: V,
    field: 'avatar',
  },
  {
    name: 'admin users: malformed JSON → 400',
    method: 'POST',
    url: '/admin/v1/users',
    raw: '{"name":"a"',
    status: 400,
    code: V,
  },
  {
    name: 'admin users: text/plain → 415',
    method: 'POST',
    url: '/admin/v1/users',
    raw: '{"name":"a"}',
    type: 'text/plain',
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'admin users: body over 64 KiB → 413',
    method: 'POST',
    url: '/admin/v1/users',
    body: { name: 'a', pad: BIG },
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  ...idCases('admin session', 'POST', (id) => `/admin/v1/users/${id}/sessions`, 'userId'),
  {
    name: 'admin session: unknown user → 404',
    method: 'POST',
    url: `/admin/v1/users/${MAX}/sessions`,
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'admin session: for a bot user → 400',
    method: 'POST',
    url: '/admin/v1/users/{botUser}/sessions',
    status: 400,
    code: V,
  },
  {
    name: 'admin guilds: ownerId a string → 400',
    method: 'POST',
    url: '/admin/v1/guilds',
    body: { name: 'g', ownerId: '12345' },
    status: 400,
    code: V,
    field: 'ownerId',
  },
  {
    name: 'admin guilds: ownerId 0 → 400',
    method: 'POST',
    url: '/admin/v1/guilds',
    body: { name: 'g', ownerId: 0 },
    status: 400,
    code: V,
    field: 'ownerId',
  },
  {
    name: 'admin guilds: ownerId 1.5 → 400',
    method: 'POST',
    url: '/admin/v1/guilds',
    body: { name: 'g', ownerId: 1.5 },
    status: 400,
    code: V,
    field: 'ownerId',
  },
  {
    name: 'admin guilds: ownerId 2^53 → 400',
    method: 'POST',
    url: '/admin/v1/guilds',
    body: { name: 'g', ownerId: 2 ** 53 },
    status: 400,
    code: V,
    field: 'ownerId',
  },
  {
    name: 'admin guilds: unknown owner → 404',
    method: 'POST',
    url: '/admin/v1/guilds',
    body: { name: 'g', ownerId: Number(MAX) },
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'admin channels: type 1 → 400 (D19)',
    method: 'POST',
    url: '/admin/v1/guilds/{guild}/channels',
    body: { name: 'c', type: 1 },
    status: 400,
    code: V,
    field: 'type',
  },
  {
    name: 'admin channels: topic over 1024 → 400',
    method: 'POST',
    url: '/admin/v1/guilds/{guild}/channels',
    body: { name: 'c', topic: 't'.repeat(1025) },
    status: 400,
    code: V,
    field: 'topic',
  },
  ...idCases('admin channels', 'POST', (id) => `/admin/v1/guilds/${id}/channels`, 'guildId', {
    name: 'c',
  }),
  {
    name: 'admin channels: unknown guild → 404',
    method: 'POST',
    url: `/admin/v1/guilds/${MAX}/channels`,
    body: { name: 'c' },
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'admin roles: permissions 131072 → 400 (D57: unknown bit)',
    method: 'POST',
    url: '/admin/v1/guilds/{guild}/roles',
    body: { name: 'r', permissions: 131072 },
    status: 400,
    code: V,
    field: 'permissions',
  },
  {
    name: 'admin roles: permissions -1 → 400',
    method: 'POST',
    url: '/admin/v1/guilds/{guild}/roles',
    body: { name: 'r', permissions: -1 },
    status: 400,
    code: V,
    field: 'permissions',
  },
  {
    name: 'admin roles: permissions "7" → 400',
    method: 'POST',
    url: '/admin/v1/guilds/{guild}/roles',
    body: { name: 'r', permissions: '7' },
    status: 400,
    code: V,
    field: 'permissions',
  },
  {
    name: 'admin member: roles not an array → 400',
    method: 'PUT',
    url: '/admin/v1/guilds/{guild}/members/{human}',
    body: { roles: 5 },
    status: 400,
    code: V,
    field: 'roles',
  },
  {
    name: 'admin member: role id 0 → 400',
    method: 'PUT',
    url: '/admin/v1/guilds/{guild}/members/{human}',
    body: { roles: [0] },
    status: 400,
    code: V,
  },
  {
    name: 'admin member: unknown role → 400',
    method: 'PUT',
    url: '/admin/v1/guilds/{guild}/members/{human}',
    body: { roles: [Number(MAX)] },
    status: 400,
    code: V,
    field: 'roles',
  },
  {
    name: 'admin member: unknown user → 404',
    method: 'PUT',
    url: `/admin/v1/guilds/{guild}/members/${MAX}`,
    body: {},
    status: 404,
    code: 'NOT_FOUND',
  },
  ...idCases('admin member', 'DELETE', (id) => `/admin/v1/guilds/{guild}/members/${id}`, 'userId'),
  {
    name: 'admin member remove: not a member → 404',
    method: 'DELETE',
    url: `/admin/v1/guilds/{guild}/members/${MAX}`,
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'admin overwrite: deny missing → 400',
    method: 'PUT',
    url: '/admin/v1/channels/{ch}/overwrites/{guild}',
    body: { allow: 1 },
    status: 400,
    code: V,
    field: 'deny',
  },
  {
    name: 'admin overwrite: allow 1.5 → 400',
    method: 'PUT',
    url: '/admin/v1/channels/{ch}/overwrites/{guild}',
    body: { allow: 1.5, deny: 0 },
    status: 400,
    code: V,
    field: 'allow',
  },
  {
    name: 'admin overwrite: DM channel → 404',
    method: 'PUT',
    url: '/admin/v1/channels/{dm}/overwrites/{guild}',
    body: { allow: 0, deny: 0 },
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'admin overwrite: role of no guild → 404',
    method: 'PUT',
    url: `/admin/v1/channels/{ch}/overwrites/${MAX}`,
    body: { allow: 0, deny: 0 },
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'admin bots: missing ownerId → 400',
    method: 'POST',
    url: '/admin/v1/bots',
    body: { name: 'b' },
    status: 400,
    code: V,
    field: 'ownerId',
  },
  {
    name: 'admin bots: empty name → 400',
    method: 'POST',
    url: '/admin/v1/bots',
    body: { ownerId: '{human}', name: '' },
    status: 400,
    code: V,
    field: 'name',
  },
  {
    name: 'admin bots: description over 1000 → 400',
    method: 'POST',
    url: '/admin/v1/bots',
    body: { ownerId: '{human}', name: 'b', description: 'd'.repeat(1001) },
    status: 400,
    code: V,
    field: 'description',
  },
  {
    name: 'admin bots: unknown owner → 404',
    method: 'POST',
    url: '/admin/v1/bots',
    body: { ownerId: Number(MAX), name: 'b' },
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'admin bots: owned by a bot user → 400',
    method: 'POST',
    url: '/admin/v1/bots',
    body: { ownerId: '{botUser}', name: 'b' },
    status: 400,
    code: V,
    field: 'ownerId',
  },
  ...idCases('admin token reset', 'POST', (id) => `/admin/v1/bots/${id}/token`, 'botId'),
  {
    name: 'admin token reset: unknown bot → 404',
    method: 'POST',
    url: `/admin/v1/bots/${MAX}/token`,
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'admin token reset: a bot user id is not a bot id → 404 (D4)',
    method: 'POST',
    url: '/admin/v1/bots/{botUser}/token',
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    // D52 added GET /admin/v1/users (the list); PUT is still no method of that path.
    name: 'admin: PUT on a GET/POST-only route → 405',
    method: 'PUT',
    url: '/admin/v1/users',
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },
  {
    name: 'admin: unknown route → 404',
    method: 'GET',
    url: '/admin/v1/nope',
    status: 404,
    code: 'NOT_FOUND',
  },
];

// No stack trace, file path, framework or database internals in any answer (D6).
const LEAK =
  /\n\s+at |node_modules|\.ts:\d|\.js:\d|FST_|SQLITE|sqlite|postgres|kysely|ajv|syntax error at|TypeError|ReferenceError|undefined/i;
const ERROR_KEYS = ['code', 'details', 'message', 'requestId', 'resetAt', 'retryAfter'];

/** D5: exactly `{"error":{"code","message",...}}`, extras only inside `error`. */
function expectD5(r: Reply, status: number, code: string): void {
  expect(r.status, r.raw).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(r.body)).toEqual(['error']);
  const e = r.body.error;
  expect(typeof e.code).toBe('string');
  expect(typeof e.message).toBe('string');
  expect(e.message.length).toBeGreaterThan(0);
  expect(e.code).toBe(code);
  for (const k of Object.keys(e)) expect(ERROR_KEYS).toContain(k);
  if (e.details !== undefined) {
    expect(Array.isArray(e.details)).toBe(true);
    for (const d of e.details) {
      expect(Object.keys(d).sort()).toEqual(['field', 'problem']);
      expect(typeof d.field).toBe('string');
      expect(typeof d.problem).toBe('string');
    }
  }
  expect(r.raw).not.toMatch(LEAK);
}

dbDescribe('bad input (table-driven)', () => {
  let h: Harness;
  let w: World;
  let vars: Record<string, string>;

  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
    const msg = await expectStatus(
      await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, { content: 'target' }),
      200,
    );
    const dm = await expectStatus(await h.as(w.bot.token).post(`/users/${w.human.id}/dm`), 200);
    const dmMsg = await expectStatus(
      await h
        .as(w.bot.token)
        .post(`/dm/channels/${dm.body.channelId}/messages`, { content: 'target' }),
      200,
    );
    vars = {
      ch: String(w.channelId),
      msg: String(msg.body.id),
      dm: String(dm.body.channelId),
      dmMsg: String(dmMsg.body.id),
      guild: String(w.guildId),
      human: String(w.human.id),
      bot: String(w.bot.id),
      botUser: String(w.bot.userId),
    };
  });
  afterAll(async () => h.close());

  const fill = (s: string): string =>
    s.replace(/\{(\w+)\}/g, (_, k: string) => vars[k] ?? `{${k}}`);
  const fillBody = (b: unknown): unknown => {
    // '{human}' as a whole JSON value stands for the id as a number; inside a string it is text.
    if (typeof b === 'string' && /^\{\w+\}$/.test(b)) return Number(fill(b));
    if (Array.isArray(b)) return b.map(fillBody);
    if (b !== null && typeof b === 'object')
      return Object.fromEntries(Object.entries(b).map(([k, v]) => [k, fillBody(v)]));
    return b;
  };

  it('the table holds at least 60 cases, each with a unique name', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(60);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const url = fill(c.url);
    const token = url.startsWith('/admin/') ? ADMIN_TOKEN : w.bot.token;
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    let payload: string | undefined;
    if (c.raw !== undefined) payload = c.raw;
    else if (c.body !== undefined)
      payload =
        // a top-level JSON string body is sent as JSON text, not a placeholder
        typeof c.body === 'string' ? JSON.stringify(c.body) : JSON.stringify(fillBody(c.body));
    if (payload !== undefined && c.type !== null)
      headers['content-type'] = c.type ?? 'application/json';
    const r = await h.request({
      method: c.method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload }),
    });
    expectD5(r, c.status, c.code);
    if (c.status === 405) expect(String(r.headers['allow'])).toMatch(/^[A-Z]+(, [A-Z]+)*$/);
    if (c.field !== undefined) {
      const fields = (r.body.error.details ?? []).map((d: { field: string }) => d.field);
      expect(fields, r.raw).toContain(c.field);
    }
  });

  it('2000 emoji pass on send, edit and DM send (D14 counts code points, not UTF-16 units)', async () => {
    const content = EMOJI.repeat(2000);
    expect(content.length).toBe(4000);
    const bot = h.as(w.bot.token);
    const sent = await bot.post(`/channels/${w.channelId}/messages`, { content });
    expect(sent.status, sent.raw).toBe(200);
    expect(sent.body.content).toBe(content);
    const edited = await bot.put(`/channels/${w.channelId}/messages/${sent.body.id}`, {
      content: `${EMOJI.repeat(1999)}a`,
    });
    expect(edited.status, edited.raw).toBe(200);
    const dm = await bot.post(`/dm/channels/${vars['dm']}/messages`, { content });
    expect(dm.status, dm.raw).toBe(200);
    // 2000 ASCII characters pass as well; a combining sequence counts each code point.
    expect(
      (await bot.post(`/channels/${w.channelId}/messages`, { content: 'x'.repeat(2000) })).status,
    ).toBe(200);
    // A surrogate pair written as JSON escapes is one code point, stored and listed as sent.
    const escaped = await h.request({
      method: 'POST',
      url: `/api/v1/channels/${w.channelId}/messages`,
      headers: { authorization: `Bearer ${w.bot.token}`, 'content-type': 'application/json' },
      payload: `{"content":"${'\\ud83d\\ude00'.repeat(2000)}"}`,
    });
    expect(escaped.status, escaped.raw).toBe(200);
    expect(escaped.body.content).toBe(content);
    const listed = await bot.get(`/channels/${w.channelId}/messages?limit=1`);
    expect(listed.body.messages[0].content).toBe(content);
    const combining = 'e\u0301'.repeat(1001); // 2002 code points, 1001 graphemes
    const r = await bot.post(`/channels/${w.channelId}/messages`, { content: combining });
    expectD5(r, 400, 'VALIDATION_ERROR');
  });

  it('cursors accept 0 and the largest id (D4, D16)', async () => {
    const bot = h.as(w.bot.token);
    for (const q of [
      'before=0',
      'after=0',
      `before=${MAX}`,
      `after=${MAX}`,
      'limit=1',
      'limit=100',
    ]) {
      const r = await bot.get(`/channels/${w.channelId}/messages?${q}`);
      expect(r.status, `${q}: ${r.raw}`).toBe(200);
    }
    for (const q of ['after=0', 'limit=1', 'limit=1000']) {
      const r = await bot.get(`/guilds/${w.guildId}/members?${q}`);
      expect(r.status, `${q}: ${r.raw}`).toBe(200);
    }
  });

  it('bad input never reaches the database: a rejected send stores nothing', async () => {
    const before = await h.as(w.bot.token).get(`/channels/${w.channelId}/messages?limit=100`);
    for (const body of [{ content: '' }, { content: 'hi', msgType: 4 }, { content: 5 }])
      expect((await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, body)).status).toBe(
        400,
      );
    const after = await h.as(w.bot.token).get(`/channels/${w.channelId}/messages?limit=100`);
    expect(after.body.messages).toEqual(before.body.messages);
  });
});

// D44: docs/interface.md says every request carries `Content-Type: application/json`, so bodiless
// requests must work with that header and an empty body — and without it.
dbDescribe('bodiless requests with Content-Type: application/json (D44)', () => {
  let h: Harness;
  let w: World;
  let d44Users = 0;
  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
  });
  afterAll(async () => h.close());

  const send = (
    method: Method,
    url: string,
    token: string,
    withType: boolean,
    payload?: string,
  ): Promise<Reply> =>
    h.request({
      method,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(withType ? { 'content-type': 'application/json' } : {}),
      },
      ...(payload === undefined ? {} : { payload }),
    });

  for (const withType of [true, false]) {
    for (const payload of [undefined, '']) {
      const label = `${withType ? 'with' : 'without'} Content-Type, ${payload === undefined ? 'no body' : 'empty body (Content-Length: 0)'}`;

      it(`GET and DELETE work ${label}`, async () => {
        const t = w.bot.token;
        for (const url of [
          '/api/v1/bot/me',
          `/api/v1/channels/${w.channelId}/messages?limit=5`,
          `/api/v1/channels/${w.channelId}`,
          `/api/v1/guilds/${w.guildId}/channels`,
          `/api/v1/guilds/${w.guildId}/members`,
          `/api/v1/guilds/${w.guildId}/members/${w.human.id}`,
        ]) {
          const r = await send('GET', url, t, withType, payload);
          expect(r.status, `${url}: ${r.raw}`).toBe(200);
        }
        const sent = await h.as(t).post(`/channels/${w.channelId}/messages`, { content: 'x' });
        const del = await send(
          'DELETE',
          `/api/v1/channels/${w.channelId}/messages/${sent.body.id}`,
          t,
          withType,
          payload,
        );
        expect(del.status, del.raw).toBe(204);
        expect(del.raw).toBe('');
      });

      it(`POST /users/:id/dm and its DM list/delete work ${label}`, async () => {
        const open = await send(
          'POST',
          `/api/v1/users/${w.human.id}/dm`,
          w.bot.token,
          withType,
          payload,
        );
        expect(open.status, open.raw).toBe(200);
        expect(open.body.recipientId).toBe(w.human.id);
        const ch = open.body.channelId as number;
        const list = await send(
          'GET',
          `/api/v1/dm/channels/${ch}/messages`,
          w.human.token,
          withType,
          payload,
        );
        expect(list.status, list.raw).toBe(200);
        const sent = await h.as(w.bot.token).post(`/dm/channels/${ch}/messages`, { content: 'x' });
        const del = await send(
          'DELETE',
          `/api/v1/dm/channels/${ch}/messages/${sent.body.id}`,
          w.bot.token,
          withType,
          payload,
        );
        expect(del.status, del.raw).toBe(204);
      });

      it(`operator session, token and member-removal routes work ${label}`, async () => {
        const user = await makeUser(h, `d44-${++d44Users}`); // names are unique (D46)
        const session = await send(
          'POST',
          `/admin/v1/users/${user.id}/sessions`,
          ADMIN_TOKEN,
          withType,
          payload,
        );
        expect(session.status, session.raw).toBe(201);
        expect(typeof session.body.token).toBe('string');
        const bot = await makeBot(h, user.id, 'd44bot');
        const reset = await send(
          'POST',
          `/admin/v1/bots/${bot.id}/token`,
          ADMIN_TOKEN,
          withType,
          payload,
        );
        expect(reset.status, reset.raw).toBe(200);
        expect(typeof reset.body.token).toBe('string');
        await h.admin.put(`/guilds/${w.guildId}/members/${user.id}`, {});
        const removed = await send(
          'DELETE',
          `/admin/v1/guilds/${w.guildId}/members/${user.id}`,
          ADMIN_TOKEN,
          withType,
          payload,
        );
        expect(removed.status, removed.raw).toBe(204);
      });
    }
  }
});
