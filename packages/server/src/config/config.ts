import { isIP } from 'node:net';
import path from 'node:path';
import { readFileSync } from 'node:fs';

/**
 * D42: the only code that reads process.env. Parsed and validated once, frozen, passed in.
 * Each variable is declared once in CONFIG_SPEC; the README's configuration table is printed
 * from the same list (`parley config --markdown`), so the docs cannot drift from the code.
 */

export interface RateSpec {
  /** tokens per second */
  readonly rate: number;
  /** bucket size */
  readonly burst: number;
}

export interface Config {
  readonly host: string;
  readonly port: number;
  /** D1: origin used in every absolute URL; undefined = derived from host and port. */
  readonly publicUrl: string | undefined;
  readonly dataDir: string;
  /** `sqlite:<file>` or `postgres://…` */
  readonly databaseUrl: string;
  /** SQLite page cache per connection, MiB */
  readonly sqliteCacheMib: number;
  readonly redisUrl: string | undefined;
  readonly adminToken: string | undefined;
  readonly tokenSecret: string | undefined;
  /** D66: the VAPID key pair of Web Push (base64url); unset: generated once, kept in the database */
  readonly vapidPublicKey: string | undefined;
  readonly vapidPrivateKey: string | undefined;
  /** D66: `mailto:` or `https:` contact the push services see in the VAPID JWT (`sub`) */
  readonly vapidSubject: string | undefined;
  readonly tlsCert: string | undefined;
  readonly tlsKey: string | undefined;
  /** Fastify `trustProxy`: whom to believe about the client's address (X-Forwarded-For) */
  readonly trustProxy: boolean | number | string;
  readonly nodeId: number;
  readonly logLevel: string;
  /** D53: after SIGTERM, /readyz answers 503 this long before the gateway closes (op 7) */
  readonly drainMs: number;
  readonly rateGlobal: RateSpec | null;
  readonly rateMessages: RateSpec | null;
  readonly rateGateway: RateSpec | null;
  readonly quotaDailyBytes: number;
  readonly quotaPerMessageBytes: number;
  readonly quotaMonthlyBytes: number;
  readonly heartbeatMs: number;
  readonly resumeWindowS: number;
  readonly webhookRetryS: readonly number[];
  readonly webhookAllowInsecure: boolean;
  readonly webhookAllowPrivate: boolean;
  /** D71: link previews of people's messages */
  readonly linkPreviews: boolean;
  /** D54: a request must have fully arrived (headers and body) within this many ms */
  readonly requestTimeoutMs: number;
  /** D53: days finished webhook deliveries are kept */
  readonly deliveryRetentionDays: DeliveryRetention;
  /** D46: who may register: `invite` (with a valid invite code), `open`, or `closed` */
  readonly registration: 'invite' | 'open' | 'closed';
  /** D47: a person's session unused for this many days expires */
  readonly sessionIdleDays: number;
  /** D60: days audit log entries are kept */
  readonly auditRetentionDays: number;
  /** D69: the OpenID provider's issuer (sign-in with it is on when set, with the client) */
  readonly oidcIssuer: string | undefined;
  readonly oidcClientId: string | undefined;
  readonly oidcClientSecret: string | undefined;
  /** D69: the provider's name on the web app's button ("Sign in with …") */
  readonly oidcName: string;
  /** D69: false turns password login and registration off (the provider signs people in) */
  readonly passwordLogin: boolean;
}

export interface DeliveryRetention {
  readonly delivered: number;
  readonly failed: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Parser<T> = (raw: string, name: string) => T;

interface VarSpec<K extends keyof Config> {
  name: string;
  key: K;
  default: string | undefined;
  /** what the README says about it */
  doc: string;
  parse: Parser<Config[K]>;
}

const int =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    if (!/^-?[0-9]+$/.test(raw.trim()))
      throw new ConfigError(name, `expected an integer, got "${raw}"`);
    const n = Number(raw.trim());
    if (!Number.isSafeInteger(n) || n < min || n > max)
      throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${raw}"`);
    return n;
  };

const bool: Parser<boolean> = (raw, name) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
};

const optionalString: Parser<string | undefined> = (raw) => (raw === '' ? undefined : raw);

/** proxy-addr's names for address ranges, accepted in PARLEY_TRUST_PROXY lists */
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `false` (default: the TCP peer is the client), `true` (believe X-Forwarded-For entirely: only
 * when every request comes through your proxy), a hop count, or the proxies' addresses / CIDRs.
 */
const trustProxy: Parser<boolean | number | string> = (raw, name) => {
  const v = raw.trim();
  if (/^(|0|false|no|off)$/i.test(v)) return false;
  if (/^(true|yes|on)$/i.test(v)) return true;
  if (/^[1-9][0-9]?$/.test(v)) return Number(v);
  const entries = v.split(',').map((e) => e.trim());
  for (const e of entries) {
    const [addr = '', prefix, extra] = e.split('/');
    const family = isIP(addr);
    const prefixOk =
      prefix === undefined ||
      (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (extra !== undefined || !(RANGE_NAMES.has(e) || (family !== 0 && prefixOk)))
      throw new ConfigError(
        name,
        `expected true, false, a hop count or proxy addresses/CIDRs, got "${e}"`,
      );
  }
  return entries.join(',');
};

const rate: Parser<RateSpec | null> = (raw, name) => {
  const v = raw.trim();
  if (v.toLowerCase() === 'off') return null;
  const m = /^([0-9]+(?:\.[0-9]+)?)\/([0-9]+)$/.exec(v);
  if (!m) throw new ConfigError(name, `expected "rate/burst" (e.g. 5/10) or "off", got "${raw}"`);
  const r = Number(m[1]);
  const burst = Number(m[2]);
  if (!(r > 0) || !(burst >= 1))
    throw new ConfigError(name, `rate must be > 0 and burst ≥ 1, got "${raw}"`);
  return { rate: r, burst };
};

const url =
  (protocols: string[]): Parser<string | undefined> =>
  (raw, name) => {
    if (raw === '') return undefined;
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new ConfigError(name, `not a valid URL: "${raw}"`);
    }
    if (!protocols.includes(u.protocol))
      throw new ConfigError(name, `expected a ${protocols.join(' or ')} URL, got "${raw}"`);
    return raw.replace(/\/+$/, '');
  };

/** D69: OAuth's loopback rule — `http://` is allowed only for these hosts. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 'localhost' || h === '[::1]' || /^127\.[0-9]+\.[0-9]+\.[0-9]+$/.test(h);
}

/**
 * D69: the issuer identifier, kept as written (it must equal the provider's `issuer` exactly):
 * `https://`, or `http://` on a loopback address only (development and tests).
 */
const issuer: Parser<string | undefined> = (raw, name) => {
  const v = raw.trim();
  if (v === '') return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(name, `not a valid URL: "${raw}"`);
  }
  if (u.protocol === 'https:') return v;
  if (u.protocol === 'http:' && isLoopbackHost(u.hostname)) return v;
  throw new ConfigError(
    name,
    `the issuer must be an https:// URL (http:// only on a loopback address such as 127.0.0.1 or localhost), got "${raw}"`,
  );
};

const databaseUrl: Parser<string> = (raw, name) => {
  if (raw.startsWith('postgres://') || raw.startsWith('postgresql://')) {
    url(['postgres:', 'postgresql:'])(raw, name);
    // D42: `postgres://` alone parses as a URL but names no server; refuse it here, with the
    // variable's name, rather than let the driver fail later with a message that names neither.
    // (A Unix socket is `postgres:///db?host=/run/postgresql`: the host is in the query.)
    const u = new URL(raw);
    if (u.hostname === '' && !u.searchParams.has('host'))
      throw new ConfigError(name, `expected postgres://user@host/database, got "${raw}"`);
    return raw;
  }
  if (raw.startsWith('sqlite:')) {
    // An empty file name would make SQLite open a temporary database, lost on exit.
    if (raw.slice('sqlite:'.length).trim() === '')
      throw new ConfigError(name, `expected sqlite:<file> (or sqlite::memory:), got "${raw}"`);
    return raw;
  }
  throw new ConfigError(name, `expected postgres://… or sqlite:<file>, got "${raw}"`);
};

const delays: Parser<number[]> = (raw, name) => {
  const parts = raw.split(',').map((p) => p.trim());
  const out = parts.map((p) => Number(p));
  if (
    parts.length === 0 ||
    parts.some((p) => p === '') ||
    out.some((n) => !(n >= 0) || !Number.isFinite(n))
  )
    throw new ConfigError(name, `expected comma-separated seconds (e.g. 5,30,120), got "${raw}"`);
  return out;
};

const secret: Parser<string | undefined> = (raw, name) => {
  if (raw === '') return undefined;
  if (raw.length < 16) throw new ConfigError(name, 'must be at least 16 characters');
  return raw;
};

/** D66: a VAPID key in base64url (as `web-push generate-vapid-keys` prints it), of `bytes` bytes. */
const vapidKey =
  (bytes: number): Parser<string | undefined> =>
  (raw, name) => {
    const v = raw.trim();
    if (v === '') return undefined;
    if (!/^[A-Za-z0-9_-]+={0,2}$/.test(v) || Buffer.from(v, 'base64url').length !== bytes)
      throw new ConfigError(name, `must be ${bytes} bytes in base64url`);
    return v.replace(/=+$/, '');
  };

/** D66: RFC 8292's contact: a `mailto:` address or an `https:` URL. */
const vapidSubject: Parser<string | undefined> = (raw, name) => {
  const v = raw.trim();
  if (v === '') return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(name, 'must be a mailto: address or an https:// URL');
  }
  if (u.protocol !== 'mailto:' && u.protocol !== 'https:')
    throw new ConfigError(name, 'must be a mailto: address or an https:// URL');
  return v;
};

/** D53: `delivered,failed` whole days, each from 1 to 3650. */
const retentionDays: Parser<DeliveryRetention> = (raw, name) => {
  const m = /^\s*([0-9]{1,4})\s*,\s*([0-9]{1,4})\s*$/.exec(raw);
  const delivered = Number(m?.[1]);
  const failed = Number(m?.[2]);
  if (!m || delivered < 1 || failed < 1 || delivered > 3650 || failed > 3650)
    throw new ConfigError(
      name,
      `expected "delivered,failed" days from 1 to 3650 (e.g. 7,30), got "${raw}"`,
    );
  return { delivered, failed };
};

/** D39: about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h, 12 h, 24 h. */
export const DEFAULT_WEBHOOK_RETRY_S = '5,30,120,600,1800,3600,10800,21600,43200,86400';

const spec = <K extends keyof Config>(s: VarSpec<K>): VarSpec<K> => s;

export const CONFIG_SPEC = [
  spec({
    name: 'PARLEY_HOST',
    key: 'host',
    default: '127.0.0.1',
    doc: 'Address to listen on.',
    parse: (r) => r,
  }),
  spec({
    name: 'PARLEY_PORT',
    key: 'port',
    default: '8080',
    doc: 'Port for HTTP, the gateway and the CDN (D1).',
    parse: int(0, 65535),
  }),
  spec({
    name: 'PARLEY_PUBLIC_URL',
    key: 'publicUrl',
    default: undefined,
    doc: 'Public origin used in absolute URLs (avatars, uploads). Default: `http://HOST:PORT`.',
    parse: url(['http:', 'https:']),
  }),
  spec({
    name: 'PARLEY_DATA_DIR',
    key: 'dataDir',
    default: './data',
    doc: 'Data directory: SQLite database, uploaded files.',
    parse: (r) => r,
  }),
  spec({
    name: 'PARLEY_DATABASE_URL',
    key: 'databaseUrl',
    default: undefined,
    doc: '`postgres://…` for PostgreSQL; default `sqlite:<data dir>/parley.db`.',
    parse: databaseUrl,
  }),
  spec({
    name: 'PARLEY_SQLITE_CACHE_MIB',
    key: 'sqliteCacheMib',
    default: '2',
    doc: 'SQLite page cache in MiB (memory for speed on large databases; the OS caches the file too).',
    parse: int(1, 65_536),
  }),
  spec({
    name: 'PARLEY_REDIS_URL',
    key: 'redisUrl',
    default: undefined,
    doc: 'Redis for shared rate limits and cross-node events (several nodes).',
    parse: url(['redis:', 'rediss:']),
  }),
  spec({
    name: 'PARLEY_ADMIN_TOKEN',
    key: 'adminToken',
    default: undefined,
    doc: 'Bearer token of the operator API `/admin/v1` (unset: that API answers 404). At least 16 characters.',
    parse: secret,
  }),
  spec({
    name: 'PARLEY_TOKEN_SECRET',
    key: 'tokenSecret',
    default: undefined,
    doc: 'HS256 key for bot tokens. Unset: generated once and kept in the database (shared by all nodes).',
    parse: secret,
  }),
  spec({
    name: 'PARLEY_VAPID_PUBLIC_KEY',
    key: 'vapidPublicKey',
    default: undefined,
    doc: 'Web Push VAPID public key (base64url P-256 point, D66). Unset with the private key: a pair is generated once and kept in the database (shared by all nodes).',
    parse: vapidKey(65),
  }),
  spec({
    name: 'PARLEY_VAPID_PRIVATE_KEY',
    key: 'vapidPrivateKey',
    default: undefined,
    doc: 'Web Push VAPID private key (base64url, 32 bytes) for `PARLEY_VAPID_PUBLIC_KEY` (D66).',
    parse: vapidKey(32),
  }),
  spec({
    name: 'PARLEY_VAPID_SUBJECT',
    key: 'vapidSubject',
    default: undefined,
    doc: 'Contact the push services see in VAPID (`mailto:` or `https:`, D66). Default: the public URL when https, else `mailto:operator@<its host>`.',
    parse: vapidSubject,
  }),
  spec({
    name: 'PARLEY_TLS_CERT',
    key: 'tlsCert',
    default: undefined,
    doc: 'PEM certificate file: serve HTTPS/WSS (D2).',
    parse: optionalString,
  }),
  spec({
    name: 'PARLEY_TLS_KEY',
    key: 'tlsKey',
    default: undefined,
    doc: 'PEM key file for `PARLEY_TLS_CERT`.',
    parse: optionalString,
  }),
  spec({
    name: 'PARLEY_TRUST_PROXY',
    key: 'trustProxy',
    default: 'false',
    doc: "Behind a reverse proxy: `true`, a hop count, or the proxies' addresses/CIDRs, so X-Forwarded-For gives the client address (rate limits).",
    parse: trustProxy,
  }),
  spec({
    name: 'PARLEY_NODE_ID',
    key: 'nodeId',
    default: '0',
    doc: 'Node number 0–31 in ids (D3); give each node of a cluster its own.',
    parse: int(0, 31),
  }),
  spec({
    name: 'PARLEY_LOG_LEVEL',
    key: 'logLevel',
    default: 'info',
    doc: 'fatal, error, warn, info, debug, trace or silent.',
    parse: (r, n) => {
      if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(r))
        throw new ConfigError(n, `unknown level "${r}"`);
      return r;
    },
  }),
  spec({
    name: 'PARLEY_DRAIN_MS',
    key: 'drainMs',
    default: '5000',
    doc: 'On SIGTERM, `/readyz` answers 503 for this long (the load balancer stops sending) before gateway clients get op 7 and the node stops (D53).',
    parse: int(0, 600_000),
  }),
  spec({
    name: 'PARLEY_RATE_GLOBAL',
    key: 'rateGlobal',
    default: '5/10',
    doc: 'Bucket `global` (D25): `rate/burst` per bot, or `off`.',
    parse: rate,
  }),
  spec({
    name: 'PARLEY_RATE_MESSAGES',
    key: 'rateMessages',
    default: '10/20',
    doc: 'Bucket `messages` (message sends, D25).',
    parse: rate,
  }),
  spec({
    name: 'PARLEY_RATE_GATEWAY',
    key: 'rateGateway',
    default: '10/20',
    doc: 'Gateway client frames (D32).',
    parse: rate,
  }),
  spec({
    name: 'PARLEY_QUOTA_DAILY_BYTES',
    key: 'quotaDailyBytes',
    default: '85899345920',
    doc: 'Daily upload quota base (D24).',
    parse: int(0, Number.MAX_SAFE_INTEGER),
  }),
  spec({
    name: 'PARLEY_QUOTA_PER_MESSAGE_BYTES',
    key: 'quotaPerMessageBytes',
    default: '10485760',
    doc: 'Daily quota added per message sent today (D24).',
    parse: int(0, Number.MAX_SAFE_INTEGER),
  }),
  spec({
    name: 'PARLEY_QUOTA_MONTHLY_BYTES',
    key: 'quotaMonthlyBytes',
    default: '2147483648000',
    doc: 'Monthly upload quota (D24).',
    parse: int(0, Number.MAX_SAFE_INTEGER),
  }),
  spec({
    name: 'PARLEY_HEARTBEAT_MS',
    key: 'heartbeatMs',
    default: '30000',
    doc: 'Gateway heartbeat interval (D30, D32).',
    parse: int(100, 600_000),
  }),
  spec({
    name: 'PARLEY_RESUME_WINDOW_S',
    key: 'resumeWindowS',
    default: '300',
    doc: 'How long a dropped gateway session stays resumable (D31).',
    parse: int(1, 86_400),
  }),
  spec({
    name: 'PARLEY_WEBHOOK_RETRY_S',
    key: 'webhookRetryS',
    default: DEFAULT_WEBHOOK_RETRY_S,
    doc: 'Waits between webhook tries, in seconds (D39).',
    parse: delays,
  }),
  spec({
    name: 'PARLEY_WEBHOOK_ALLOW_INSECURE',
    key: 'webhookAllowInsecure',
    default: 'false',
    doc: 'Allow `http://` webhook addresses (development, D37).',
    parse: bool,
  }),
  spec({
    name: 'PARLEY_WEBHOOK_ALLOW_PRIVATE',
    key: 'webhookAllowPrivate',
    default: 'false',
    doc: 'Allow webhook targets on loopback/private ranges (D37).',
    parse: bool,
  }),
  spec({
    name: 'PARLEY_LINK_PREVIEWS',
    key: 'linkPreviews',
    default: 'on',
    doc: "Fetch previews of the links in people's messages, behind the webhook guard, cached a day (D71); off turns them off.",
    parse: bool,
  }),
  spec({
    name: 'PARLEY_REQUEST_TIMEOUT_MS',
    key: 'requestTimeoutMs',
    default: '30000',
    doc: 'A request whose headers and body have not fully arrived in this time gets 408 and its connection is closed (D54).',
    parse: int(100, 3_600_000),
  }),
  spec({
    name: 'PARLEY_DELIVERY_RETENTION_DAYS',
    key: 'deliveryRetentionDays',
    default: '7,30',
    doc: 'Days webhook deliveries are kept once delivered, and once failed (D53).',
    parse: retentionDays,
  }),
  spec({
    name: 'PARLEY_REGISTRATION',
    key: 'registration',
    default: 'invite',
    doc: 'Who may register (D46): `invite` (a valid invite code, which joins its guild), `open`, or `closed` (the operator creates people).',
    parse: (r, n) => {
      const v = r.trim().toLowerCase();
      if (v === 'invite' || v === 'open' || v === 'closed') return v;
      throw new ConfigError(n, `expected invite, open or closed, got "${r}"`);
    },
  }),
  spec({
    name: 'PARLEY_SESSION_IDLE_DAYS',
    key: 'sessionIdleDays',
    default: '30',
    doc: "A person's session unused for this many days expires (D47).",
    parse: int(1, 3650),
  }),
  spec({
    name: 'PARLEY_AUDIT_RETENTION_DAYS',
    key: 'auditRetentionDays',
    default: '180',
    doc: "Days the audit log (guilds' and the operator's) keeps its entries (D60).",
    parse: int(1, 36500),
  }),
  spec({
    name: 'PARLEY_OIDC_ISSUER',
    key: 'oidcIssuer',
    default: undefined,
    doc: 'OpenID Connect provider (its issuer URL, `https://`; `http://` only on loopback): people sign in with it (D69; docs/deploy.md "Single sign-on"). Needs the client id and secret.',
    parse: issuer,
  }),
  spec({
    name: 'PARLEY_OIDC_CLIENT_ID',
    key: 'oidcClientId',
    default: undefined,
    doc: "Parley's client id at the OpenID provider (D69).",
    parse: optionalString,
  }),
  spec({
    name: 'PARLEY_OIDC_CLIENT_SECRET',
    key: 'oidcClientSecret',
    default: undefined,
    doc: "Parley's client secret at the OpenID provider (D69).",
    parse: optionalString,
  }),
  spec({
    name: 'PARLEY_OIDC_NAME',
    key: 'oidcName',
    default: 'SSO',
    doc: 'The provider\'s name on the login page\'s button: "Sign in with …" (D69).',
    parse: (r, n) => {
      const v = r.trim();
      if (v.length < 1 || [...v].length > 40 || /[\p{Cc}\p{Cf}]/u.test(v))
        throw new ConfigError(n, `expected 1–40 printable characters, got "${r}"`);
      return v;
    },
  }),
  spec({
    name: 'PARLEY_PASSWORD_LOGIN',
    key: 'passwordLogin',
    default: 'true',
    doc: 'false: no password login or registration (403); people sign in with the OpenID provider only (D69).',
    parse: bool,
  }),
] as const;

/**
 * The folder relative paths (data directory, `.env`, TLS files) are meant from. `npm start` and
 * `npm run parley` run inside the server's workspace folder, but the operator typed them in the
 * repository root: npm says where in INIT_CWD (D43: `./data` is where the README says).
 */
export function operatorDirectory(env: Record<string, string | undefined>): string | undefined {
  return env['INIT_CWD'] || undefined;
}

/** Reads `.env` from the working directory if there is one (never overriding real variables). */
export function loadDotEnv(file = '.env'): void {
  try {
    readFileSync(file);
  } catch {
    return;
  }
  process.loadEnvFile(file);
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  const out: Record<string, unknown> = {};
  for (const s of CONFIG_SPEC) {
    const raw = env[s.name];
    const value = raw ?? s.default;
    out[s.key] = value === undefined ? undefined : (s.parse as Parser<unknown>)(value, s.name);
  }
  const cfg = out as unknown as { -readonly [K in keyof Config]: Config[K] };
  cfg.dataDir = path.resolve(cfg.dataDir);
  cfg.databaseUrl ??= `sqlite:${path.join(cfg.dataDir, 'parley.db')}`;
  if ((cfg.vapidPublicKey === undefined) !== (cfg.vapidPrivateKey === undefined))
    throw new ConfigError(
      cfg.vapidPublicKey === undefined ? 'PARLEY_VAPID_PUBLIC_KEY' : 'PARLEY_VAPID_PRIVATE_KEY',
      'PARLEY_VAPID_PUBLIC_KEY and PARLEY_VAPID_PRIVATE_KEY go together',
    );
  if ((cfg.tlsCert === undefined) !== (cfg.tlsKey === undefined))
    throw new ConfigError(
      cfg.tlsCert === undefined ? 'PARLEY_TLS_CERT' : 'PARLEY_TLS_KEY',
      'PARLEY_TLS_CERT and PARLEY_TLS_KEY go together',
    );
  // D69: the provider's three settings go together; passwords off needs the provider.
  const oidc = [
    ['PARLEY_OIDC_ISSUER', cfg.oidcIssuer],
    ['PARLEY_OIDC_CLIENT_ID', cfg.oidcClientId],
    ['PARLEY_OIDC_CLIENT_SECRET', cfg.oidcClientSecret],
  ] as const;
  const missing = oidc.filter(([, v]) => v === undefined).map(([n]) => n);
  if (missing.length > 0 && missing.length < oidc.length)
    throw new ConfigError(
      missing[0] ?? 'PARLEY_OIDC_ISSUER',
      'PARLEY_OIDC_ISSUER, PARLEY_OIDC_CLIENT_ID and PARLEY_OIDC_CLIENT_SECRET go together',
    );
  if (!cfg.passwordLogin && cfg.oidcIssuer === undefined)
    throw new ConfigError(
      'PARLEY_PASSWORD_LOGIN',
      'false needs PARLEY_OIDC_ISSUER (with its client id and secret): otherwise nobody could sign in',
    );
  return Object.freeze(cfg);
}

/**
 * PARLEY_* names that are read elsewhere than CONFIG_SPEC: the CLI's own inputs (`parley listen`
 * takes the bot token and webhook secret from these, issue 28) and the test and benchmark tools'.
 */
const OTHER_NAMES = [
  'PARLEY_TOKEN',
  'PARLEY_WEBHOOK_SECRET',
  'PARLEY_TEST_DIALECT',
  'PARLEY_TEST_PG_URL',
  'PARLEY_FUZZ_RUNS',
  'PARLEY_SOAK_MINUTES',
  'PARLEY_BENCH_REDIS_URL',
];

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/**
 * Issue 28: a mistyped variable (`PARLEY_PROT`) is otherwise silently ignored. One warning per
 * unknown `PARLEY_*` name, with the nearest known one when it is close enough to be a typo.
 */
export function unknownVariableWarnings(env: Record<string, string | undefined>): string[] {
  const known = [...CONFIG_SPEC.map((s) => s.name), ...OTHER_NAMES];
  const out: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('PARLEY_') || known.includes(name)) continue;
    let best = '';
    let dist = Infinity;
    for (const k of known) {
      const d = editDistance(name, k);
      if (d < dist) [best, dist] = [k, d];
    }
    const close = dist <= Math.max(2, Math.floor((name.length - 'PARLEY_'.length) / 3));
    out.push(
      `${name} is not a Parley setting and is ignored${close ? ` — did you mean ${best}?` : ''} (\`parley config\` lists them)`,
    );
  }
  return out;
}

/** The README's configuration table. */
export function configMarkdownTable(): string {
  const rows = CONFIG_SPEC.map(
    (s) => `| \`${s.name}\` | ${s.default === undefined ? '—' : `\`${s.default}\``} | ${s.doc} |`,
  );
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}
