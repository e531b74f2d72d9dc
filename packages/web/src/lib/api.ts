import { signal } from '@preact/signals';
import type { ErrorBody, UploadedFile } from './types.js';
import { when } from './time.js';

/**
 * The app's one HTTP client (docs/architecture.md#habit-11: only the public /api/v1 and /app/v1).
 * Same origin: the HttpOnly session cookie (D47) authenticates every call, /api/v1 included
 * (D70) — the app never holds its session token, so no script on the page can read it. A short
 * 429 RATE_LIMIT_EXCEEDED is waited out (`retryAfter`, D26) and retried, never shown as an
 * error; a long one (a login lock) is an error the screen explains. A 401 means the session
 * ended.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { field: string; problem: string }[] = [],
    readonly resetAt?: string,
    /** D26/D46: seconds until a refused request may be tried again (429) */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
  /** the server's problem with one field (D5 `details`), for showing it on that field */
  field(name: string): string | undefined {
    const p = this.details.find((d) => d.field === name || d.field.endsWith(`.${name}`))?.problem;
    return p === undefined ? undefined : plainProblem(p);
  }
}

/**
 * A schema validator's wording ("must NOT have fewer than 8 characters (Unicode code points)")
 * in the words a person reads; the server's own sentences pass unchanged.
 */
export function plainProblem(problem: string): string {
  const fewer = /must NOT have fewer than (\d+) characters/.exec(problem);
  if (fewer) return `Use at least ${fewer[1]} characters.`;
  const more = /must NOT have more than (\d+) characters/.exec(problem);
  if (more) return `Use at most ${more[1]} characters.`;
  const few = /must NOT have fewer than (\d+) items/.exec(problem);
  if (few) return `Give at least ${few[1]}.`;
  const many = /must NOT have more than (\d+) items/.exec(problem);
  if (many) return `Give at most ${many[1]}.`;
  if (/must match pattern|must match format/.test(problem))
    return 'This is not in the expected form.';
  if (/must have required property/.test(problem)) return 'This is required.';
  if (/must be (integer|number|string|boolean|object|array)/.test(problem))
    return 'This is not a valid value.';
  return problem;
}

/** true while requests are waiting out a rate limit (a quiet "slowing down" hint, no toasts) */
export const throttled = signal(false);
/** set when any call answers 401: the session is gone */
export const sessionLost = signal(false);

/** D70: a 429 asking to wait longer than this is not waited out: it is shown (a login lock). */
const LONGEST_WAIT_S = 10;

// One pause shared by every request: when the bucket is empty, nobody asks until it refills.
let pausedUntil = 0;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitTurn(): Promise<void> {
  while (Date.now() < pausedUntil) {
    throttled.value = true;
    await sleep(pausedUntil - Date.now());
  }
  throttled.value = false;
}

function noteHeaders(res: Response): void {
  // D26: nothing left in the bucket → hold the next requests until a token is back.
  const remaining = res.headers.get('x-ratelimit-remaining');
  const resetAfter = Number(res.headers.get('x-ratelimit-reset-after'));
  const limit = Number(res.headers.get('x-ratelimit-limit'));
  if (remaining === '0' && resetAfter > 0 && limit > 0) {
    pausedUntil = Math.max(pausedUntil, Date.now() + (resetAfter * 1000) / limit);
  }
}

async function toError(res: Response): Promise<ApiError> {
  let body: Partial<ErrorBody> | { error?: string; message?: string } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    /* not JSON */
  }
  const e = (body as { error?: unknown }).error;
  if (e && typeof e === 'object') {
    const o = e as ErrorBody['error'];
    const retryAfter = (o as { retryAfter?: unknown }).retryAfter;
    return new ApiError(
      res.status,
      o.code,
      o.message,
      o.details ?? [],
      o.resetAt,
      typeof retryAfter === 'number' ? retryAfter : undefined,
    );
  }
  // D5: the simpler form is accepted too.
  const code = typeof e === 'string' ? e : 'HTTP_' + res.status;
  const message = (body as { message?: string }).message ?? res.statusText;
  return new ApiError(res.status, code, message);
}

export interface CallOptions {
  /** a 401 is an expected answer here (login), not a lost session */
  anonymous?: boolean;
  signal?: AbortSignal;
  /** D60: why (a moderator's reason), sent URL-encoded as X-Audit-Log-Reason (≤ 512) */
  reason?: string;
  /** the request outlives the page (a read mark sent as the person navigates away) */
  keepalive?: boolean;
}

async function send(
  method: string,
  path: string,
  body: BodyInit | undefined,
  headers: Record<string, string>,
  opts: CallOptions,
): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    await waitTurn();
    const res = await fetch(path, {
      method,
      headers,
      body: body ?? null,
      credentials: 'same-origin',
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.keepalive ? { keepalive: true } : {}),
    });
    noteHeaders(res);
    if (res.status === 429 && attempt < 8) {
      const err = await toError(res.clone());
      const retry = Number(err.retryAfter ?? res.headers.get('retry-after') ?? 1);
      if (err.code === 'RATE_LIMIT_EXCEEDED' && retry <= LONGEST_WAIT_S) {
        // D26: a refused request changed nothing; wait as told, then ask again.
        pausedUntil = Math.max(pausedUntil, Date.now() + Math.max(0.05, retry) * 1000 + 20);
        continue;
      }
    }
    if (res.status === 401 && !opts.anonymous) sessionLost.value = true;
    return res;
  }
}

export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  opts: CallOptions = {},
): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (opts.reason) headers['x-audit-log-reason'] = encodeURIComponent(opts.reason.slice(0, 512));
  const res = await send(
    method,
    path,
    body === undefined ? undefined : JSON.stringify(body),
    headers,
    opts,
  );
  if (!res.ok) throw await toError(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export const get = <T>(path: string, opts?: CallOptions) => call<T>('GET', path, undefined, opts);
export const post = <T>(path: string, body?: unknown, opts?: CallOptions) =>
  call<T>('POST', path, body, opts);
export const put = <T>(path: string, body?: unknown, opts?: CallOptions) =>
  call<T>('PUT', path, body, opts);
export const patch = <T>(path: string, body?: unknown, opts?: CallOptions) =>
  call<T>('PATCH', path, body, opts);
export const del = (path: string, opts?: CallOptions) =>
  call<void>('DELETE', path, undefined, opts);

/** D22: one file in the part `file`; 413, 415 and 429 QUOTA_EXCEEDED come back as ApiError. */
export async function upload(file: File): Promise<UploadedFile> {
  const form = new FormData();
  form.append('file', file, file.name || defaultName(file.type));
  const res = await send('POST', '/api/v1/files/upload', form, {}, {});
  if (!res.ok) throw await toError(res);
  return (await res.json()) as UploadedFile;
}

/** A pasted screenshot has no name; D22 wants an extension that agrees with the bytes. */
function defaultName(type: string): string {
  const ext =
    { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'audio/mpeg': 'mp3' }[type] ??
    'bin';
  return `pasted.${ext}`;
}

/** What a person should read for an error (the quota's reset time included). */
export function describe(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === 'QUOTA_EXCEEDED')
      return `Upload quota used up — it resets ${err.resetAt ? when(err.resetAt) : 'soon'}.`;
    if (err.code === 'PAYLOAD_TOO_LARGE') return 'That file is too large: 5 MiB at most.';
    if (err.code === 'UNSUPPORTED_MEDIA_TYPE')
      return 'That file type is not allowed: jpg, png, gif, mp3, wav or mp4.';
    const first = err.details[0];
    // a request the schema refused: name the field and say its problem plainly
    if (first && /must /.test(err.message))
      return `${first.field.replace(/^.*[./]/, '')}: ${plainProblem(first.problem)}`;
    return plainProblem(err.message);
  }
  if (err instanceof TypeError) return 'The server cannot be reached.';
  return err instanceof Error ? err.message : String(err);
}
