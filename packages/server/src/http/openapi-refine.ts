import {
  DmMessageDeleteData,
  EVENT_TYPES,
  GuildMemberAddData,
  GuildMemberRemoveData,
  MAX_ID,
  Message,
  MessageDeleteData,
  type EventType,
} from '@parley/protocol';

/**
 * What @fastify/swagger produces, refined into the document clients generate from (issue 14).
 * Everything here is derived from what a route has (its method and path, its security, its
 * parameters, body and content types, its `config.errors`), never from a list of routes, so
 * routes added later are documented the same way:
 *
 * - an `operationId` on every operation: the schema's own when it sets one, else
 *   `<area><Method><Path words>` (`apiGetChannelsMessages`, `adminPostBotsToken`, …);
 * - every schema with a `title` hoisted into `components.schemas` and `$ref`ed everywhere;
 * - ids as `integer` (int64, the D4 rule in the description) in paths, queries and bodies alike:
 *   the `Id` and `Cursor` components (validation is unchanged: paths and queries are still
 *   checked as canonical decimal text);
 * - per operation only the error statuses it can return (see `errorStatuses`);
 * - the D22 multipart body on operations that consume `multipart/form-data`;
 * - `X-Request-Id` on every answer (D7), `X-RateLimit-*` on rate-limited ones (D26),
 *   `Retry-After` on 429 and `WWW-Authenticate` on 401;
 * - the eight events in the 3.1 `webhooks` section (D34, D35, D38); tags with descriptions.
 */

/** The parts of a recorded Fastify route that the refinement reads. */
export interface RouteInfo {
  method: string | string[];
  url: string;
  schema?: { consumes?: readonly string[]; hide?: boolean } & Record<string, unknown>;
  config?: { errors?: readonly number[]; bucket?: string } & Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Error statuses this route can answer beyond those derived from what it has (auth,
     * parameters, body…), for the OpenAPI document: e.g. `[409]` where a conflict is possible.
     */
    errors?: number[];
  }
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a JSON document walked generically

/** D26: the operator API is not rate limited; unknown schemes are (people, D45). */
const SCHEMES: Record<string, { limited: boolean; forbidden: 'never' | 'onResource' | 'always' }> =
  {
    // D12: a bot's rights are checked on the guild, channel or user a path names.
    botToken: { limited: true, forbidden: 'onResource' },
    adminToken: { limited: false, forbidden: 'never' },
  };
const UNKNOWN_SCHEME = { limited: true, forbidden: 'always' } as const;

const TAG_DESCRIPTIONS: Record<string, string> = {
  bot: 'The calling bot (docs/interface.md#resources; D8 tokens).',
  messages: 'Guild channel messages: send, list (newest first, D16), edit and delete (D13–D18).',
  channels: 'Channels of a guild the caller can view (D12, D19).',
  members: 'Guild members, by user id ascending (D20).',
  dm: 'Direct-message channels and their messages (D17, D21).',
  files: 'Uploads (multipart field `file`, D22) and the upload quota (D24).',
  operator: 'Operator API at /admin/v1, authorized by PARLEY_ADMIN_TOKEN (D41, D52).',
  app: "The people's API at /app/v1: accounts, sessions, guilds, bots of their owners (D45–D50).",
  webhooks: "Events POSTed to a bot's webhook address, signed (D34, D35, D38, D39).",
};

const ERROR_TEXT: Record<number, string> = {
  400: 'VALIDATION_ERROR: malformed or invalid input (D4, D6)',
  401: 'UNAUTHORIZED: missing or invalid token (D9)',
  403: 'FORBIDDEN: the caller lacks the right (D12, D13)',
  404: 'NOT_FOUND: a well-formed id names nothing (D4)',
  409: 'CONFLICT (D6)',
  413: 'PAYLOAD_TOO_LARGE: JSON body over 64 KiB or file over 5 MiB (D6)',
  415: 'UNSUPPORTED_MEDIA_TYPE: wrong Content-Type or file format (D6, D22)',
  429: 'RATE_LIMIT_EXCEEDED (retryAfter, D26) or QUOTA_EXCEEDED (resetAt, D24)',
  500: 'INTERNAL_ERROR, with the request id that is also in the log (D6)',
};

const ID_RULE =
  'An id (D3): a positive integer ≤ 2^53−1, unique and increasing in creation time. In a path or ' +
  'query it is written in canonical decimal (`^[1-9][0-9]*$`: no sign, no leading zero, no ' +
  'exponent), else 400 VALIDATION_ERROR; a well-formed id naming nothing is 404 (D4).';

const COMPONENT_HEADERS: Json = {
  'X-Request-Id': {
    description: 'The id of this request, also in the server log (D7).',
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': {
    description: "The bucket's burst (D26).",
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Whole requests left in the bucket now (D26).',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'Unix epoch seconds (may be fractional) when the bucket is full again (D26).',
    schema: { type: 'number' },
  },
  'X-RateLimit-Reset-After': {
    description: 'Seconds (fractional) until the bucket is full again; immune to clock skew (D26).',
    schema: { type: 'number' },
  },
  'X-RateLimit-Bucket': {
    description: 'The bucket the request drew from: `global` or `messages` (D25).',
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Whole seconds (rounded up) to wait before retrying (D26).',
    schema: { type: 'integer' },
  },
  'WWW-Authenticate': {
    description: '`Bearer` (D7).',
    schema: { type: 'string' },
  },
};
const RATE_HEADERS = Object.keys(COMPONENT_HEADERS).filter((h) => h.startsWith('X-RateLimit-'));

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;
/** JSON text with sorted keys: two schemas written in a different key order compare equal. */
const canonical = (x: unknown): string =>
  JSON.stringify(x, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const words = (s: string): string =>
  s
    .replace(/^@/, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/** `GET /api/v1/channels/{channelId}/messages/{messageId}` → `apiGetChannelsMessagesByMessageId`. */
export function operationIdOf(method: string, path: string): string {
  const segs = path.split('/').filter(Boolean);
  // The area (`api`, `app`, `admin`) and its version: `/api/v1/…` → `api`.
  const area = segs[0] ?? 'root';
  const rest = segs.slice(/^v\d+$/.test(segs[1] ?? '') ? 2 : 1);
  const last = rest[rest.length - 1];
  const named = rest.filter((s) => !s.startsWith('{')).map(words);
  const byParam = last?.startsWith('{') ? `By${words(last.slice(1, -1))}` : '';
  return `${area}${words(method.toLowerCase())}${named.join('')}${byParam}`;
}

const isIdSchema = (s: Json): boolean =>
  s.type === 'integer' && s.minimum === 1 && s.maximum === MAX_ID && Object.keys(s).length === 3;

/** The event schemas of the `webhooks` section (D35), named. */
const EVENT_DATA: Record<EventType, { name: string; schema: object }> = {
  MESSAGE_CREATE: { name: 'Message', schema: Message },
  MESSAGE_UPDATE: { name: 'Message', schema: Message },
  MESSAGE_DELETE: { name: 'MessageDeleteData', schema: MessageDeleteData },
  DM_MESSAGE_CREATE: { name: 'Message', schema: Message },
  DM_MESSAGE_UPDATE: { name: 'Message', schema: Message },
  DM_MESSAGE_DELETE: { name: 'DmMessageDeleteData', schema: DmMessageDeleteData },
  GUILD_MEMBER_ADD: { name: 'GuildMemberAddData', schema: GuildMemberAddData },
  GUILD_MEMBER_REMOVE: { name: 'GuildMemberRemoveData', schema: GuildMemberRemoveData },
};

export function refineOpenApi(input: Json, routes: readonly RouteInfo[]): Json {
  const doc = clone(input);
  doc.openapi = '3.1.0';
  doc.info = {
    ...doc.info,
    license: { name: 'MIT', identifier: 'MIT' },
  };
  const components: Json = (doc.components ??= {});
  const schemas: Json = (components.schemas ??= {});
  components.headers = { ...COMPONENT_HEADERS, ...components.headers };
  schemas.Id = {
    type: 'integer',
    format: 'int64',
    minimum: 1,
    maximum: MAX_ID,
    description: ID_RULE,
    examples: [1234567890123],
  };
  schemas.Cursor = {
    type: 'integer',
    format: 'int64',
    minimum: 0,
    maximum: MAX_ID,
    description:
      'A position in a list (D16): an id in canonical decimal, or `0` for the very start; it need not name an existing message.',
  };

  const routeOf = new Map<string, RouteInfo>();
  for (const r of routes)
    for (const m of [r.method].flat())
      routeOf.set(`${m.toLowerCase()} ${r.url.replace(/:(\w+)/g, '{$1}')}`, r);

  const usedIds = new Map<string, string>();
  const usedTags = new Set<string>();
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op: Json | undefined = item[method];
      if (!op) continue;
      const route = routeOf.get(`${method} ${path}`);
      op.operationId ??= operationIdOf(method, path);
      const clash = usedIds.get(op.operationId as string);
      if (clash)
        throw new Error(`operationId ${op.operationId} of ${method} ${path} is also ${clash}`);
      usedIds.set(op.operationId as string, `${method} ${path}`);
      for (const t of (op.tags as string[] | undefined) ?? []) usedTags.add(t);

      for (const p of (op.parameters as Json[] | undefined) ?? []) refineParameter(p);
      const multipart =
        route?.schema?.consumes?.some((c) => /multipart\/form-data/i.test(c)) ?? false;
      if (multipart && !op.requestBody) op.requestBody = uploadBody();
      refineResponses(doc, op, route, multipart);
    }
  }

  doc.webhooks = webhooks();
  usedTags.add('webhooks');
  const known = new Map<string, Json>(
    ((doc.tags as Json[] | undefined) ?? []).map((t) => [t.name as string, t]),
  );
  doc.tags = [...usedTags].map((name) => ({
    ...known.get(name),
    name,
    description:
      (known.get(name)?.description as string | undefined) ??
      TAG_DESCRIPTIONS[name] ??
      `Operations on ${name}.`,
  }));

  // Ids, then titled schemas into components, everywhere a schema can be.
  walkSchemas(doc, (s) => (isIdSchema(s) ? ref('Id') : undefined));
  hoistTitled(doc);
  return doc;
}

function refineParameter(p: Json): void {
  const format = p.schema?.format as string | undefined;
  if (format === 'parley-id' || format === 'parley-cursor') {
    p.schema = ref(format === 'parley-id' ? 'Id' : 'Cursor');
    if (typeof p.example === 'string') p.example = Number(p.example);
    delete p.description; // the component says it (D4, D16)
  }
}

function uploadBody(): Json {
  return {
    required: true,
    description: 'Exactly one file, in the field `file` (D22). Other text fields are ignored.',
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          required: ['file'],
          properties: {
            file: {
              type: 'string',
              contentMediaType: 'application/octet-stream',
              description:
                'jpg/jpeg, png, gif, mp3, wav or mp4 (by content; the extension must agree), at most 5 MiB (5,242,880 bytes)',
            },
          },
        },
        encoding: {
          file: {
            contentType: 'image/jpeg, image/png, image/gif, audio/mpeg, audio/wav, video/mp4',
          },
        },
      },
    },
  };
}

/**
 * The error statuses an operation can answer, from what it has:
 * 500 always (D6); 401 when it needs a token; 429 when its caller is rate limited (D25, D26: not
 * the operator), and for uploads (quota, D24); 400 when it takes parameters, a query or a body;
 * 404 when a path or the body names a resource by id; 403 where the caller's rights on that
 * resource are checked (D12), or always for callers whose token kind may be refused outright;
 * 413 and 415 when it takes a body (D6); plus the route's own `config.errors`.
 */
export function errorStatuses(
  doc: Json,
  op: Json,
  route: RouteInfo | undefined,
  multipart: boolean,
): Set<number> {
  const s = new Set<number>([500]);
  const security = ((op.security ?? doc.security ?? []) as Json[]).flatMap((r) => Object.keys(r));
  const schemes = security.map((n) => SCHEMES[n] ?? UNKNOWN_SCHEME);
  const params = (op.parameters as Json[] | undefined) ?? [];
  const onResource = params.some((p) => p.in === 'path');
  const bodyNamesIds = JSON.stringify(op.requestBody ?? {}).includes('"maximum":9007199254740991');
  if (schemes.length > 0) s.add(401);
  if (schemes.length === 0 || schemes.some((x) => x.limited)) s.add(429);
  if (params.length > 0 || op.requestBody) s.add(400);
  if (onResource || bodyNamesIds) s.add(404);
  if (schemes.some((x) => x.forbidden === 'always' || (x.forbidden === 'onResource' && onResource)))
    s.add(403);
  if (op.requestBody) {
    s.add(413);
    s.add(415);
  }
  if (multipart) s.add(429);
  for (const e of route?.config?.errors ?? []) s.add(e);
  return s;
}

function refineResponses(
  doc: Json,
  op: Json,
  route: RouteInfo | undefined,
  multipart: boolean,
): void {
  const responses: Json = (op.responses ??= {});
  const wanted = errorStatuses(doc, op, route, multipart);
  const security = ((op.security ?? doc.security ?? []) as Json[]).flatMap((r) => Object.keys(r));
  const limited =
    security.length === 0 || security.some((n) => (SCHEMES[n] ?? UNKNOWN_SCHEME).limited);
  for (const code of Object.keys(responses)) {
    const n = Number(code);
    if (n >= 400 && !wanted.has(n)) delete responses[code];
  }
  for (const n of [...wanted].sort()) {
    const r: Json = (responses[String(n)] ??= {
      content: { 'application/json': { schema: ref('ErrorBody') } },
    });
    r.description = ERROR_TEXT[n] ?? 'D5 error form';
  }
  for (const [code, r] of Object.entries<Json>(responses)) {
    const headers: Json = (r.headers ??= {});
    headers['X-Request-Id'] = { $ref: '#/components/headers/X-Request-Id' };
    if (limited) for (const h of RATE_HEADERS) headers[h] = { $ref: `#/components/headers/${h}` };
    if (code === '429') headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    if (code === '401')
      headers['WWW-Authenticate'] = { $ref: '#/components/headers/WWW-Authenticate' };
    if (r.description === 'Default Response')
      r.description = Number(code) === 204 ? 'No content' : 'Success';
  }
  // Sorted: 2xx first, then the errors by status.
  op.responses = Object.fromEntries(
    Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
  );
}

function webhooks(): Json {
  const out: Json = {};
  const header = (name: string, description: string, schema: Json): Json => ({
    name,
    in: 'header',
    required: true,
    description,
    schema,
  });
  for (const type of EVENT_TYPES) {
    const data = EVENT_DATA[type];
    const name = `${words(type.toLowerCase())}Event`;
    out[type] = {
      post: {
        operationId: `webhook${words(type.toLowerCase())}`,
        summary: `${type} delivered to the bot's webhook address (D34, D35, D38)`,
        tags: ['webhooks'],
        security: [],
        parameters: [
          header('X-Service-Event', "The event type, equal to the body's `type`.", {
            type: 'string',
            const: type,
          }),
          header(
            'X-Service-Signature',
            "`sha256=` + hex HMAC-SHA256 of the exact body bytes, keyed with the bot's webhook secret (D38).",
            {
              type: 'string',
              pattern: '^sha256=[0-9a-f]{64}$',
            },
          ),
          header(
            'X-Service-Delivery',
            'Unique id of this delivery, the same on every retry: dedupe on it (D38).',
            { type: 'string' },
          ),
          header('X-Service-Attempt', '1, 2, … (D39).', { type: 'integer', minimum: 1 }),
          header('X-Service-Timestamp', 'Unix seconds of this attempt; refuse stale ones (D38).', {
            type: 'integer',
          }),
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                title: name,
                type: 'object',
                required: ['type', 'data'],
                properties: {
                  type: { type: 'string', const: type },
                  data: { ...clone(data.schema), title: data.name },
                },
                additionalProperties: false,
              },
            },
          },
        },
        responses: {
          '200': { description: 'Any 2xx within 10 s: delivered (D39).' },
          '4XX': {
            description:
              'Any other answer (or none) is retried with backoff, then marked failed (D39).',
          },
        },
      },
    };
  }
  return out;
}

const SKIP = new Set(['example', 'examples', 'enum', 'const', 'default']);

/** Visit every schema object of the document (bottom-up); `f` may return a replacement. */
function walkSchemas(doc: Json, f: (s: Json) => Json | undefined): void {
  const visitSchema = (s: unknown): unknown => {
    if (s === null || typeof s !== 'object') return s;
    if (Array.isArray(s)) return s.map(visitSchema);
    const o = s as Json;
    for (const [k, v] of Object.entries(o)) {
      if (SKIP.has(k)) continue;
      if (k === 'properties' || k === 'patternProperties' || k === '$defs') {
        for (const [pk, pv] of Object.entries<Json>(v as Json)) (v as Json)[pk] = visitSchema(pv);
      } else if (typeof v === 'object') o[k] = visitSchema(v);
    }
    return f(o) ?? o;
  };
  const visitDoc = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node as Json)) {
      if (k === 'schema' && typeof v === 'object') (node as Json)[k] = visitSchema(v);
      else if (SKIP.has(k)) continue;
      else visitDoc(v);
    }
  };
  visitDoc(doc);
  const schemas: Json = doc.components?.schemas ?? {};
  for (const [name, s] of Object.entries<Json>(schemas)) {
    if (name === 'Id' || name === 'Cursor') continue;
    // A component itself stays where it is; its parts are visited.
    const copy = visitSchema(s) as Json;
    schemas[name] = copy.$ref && s.title ? s : copy;
  }
}

/** Every schema with a `title` becomes `components.schemas[title]`, and is referenced. */
function hoistTitled(doc: Json): void {
  const schemas: Json = doc.components.schemas;
  const owner = new Map<string, string>(); // title → its JSON, to catch two different schemas under one name
  for (const [name, s] of Object.entries<Json>(schemas)) owner.set(name, canonical(s));
  const replace = (s: Json): Json | undefined => {
    if (typeof s.title !== 'string' || s.$ref) return undefined;
    const name = s.title;
    const text = canonical(s);
    const had = owner.get(name);
    if (had === undefined) {
      owner.set(name, text);
      schemas[name] = s;
    } else if (had !== text && schemas[name] !== s)
      throw new Error(`two different schemas are titled ${name}: give one another title`);
    return ref(name);
  };
  walkSchemas(doc, replace);
}
