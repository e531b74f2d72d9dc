import { ParleyError } from './errors.js';

/**
 * What the SDK tells a bot author who asks (`debug: (e) => console.log(e)` in the options of
 * `Bot`, `RestClient` or `GatewayClient`): each request and its answer, waits for a rate limit,
 * and the gateway's connections, reconnects and resumes. No token or secret is ever in one.
 */
export type DebugEvent =
  | {
      type: 'request';
      method: string;
      /** the route template, the rate-limit key (`/channels/:channelId/messages`) */
      route: string;
      url: string;
      /** the answer's status; 0 when there was none (network error, timeout) */
      status: number;
      ms: number;
      /** 1 for the first try of a call */
      attempt: number;
      error?: string;
    }
  | {
      type: 'rateLimitWait';
      bucket: string;
      route: string;
      /** the estimated (queue) or announced (429 `retryAfter`) wait */
      waitMs: number;
      /** `queue`: held back before sending (D25); `429`: the server refused anyway (D26) */
      reason: 'queue' | '429';
    }
  | { type: 'connect'; url: string; resume: boolean }
  | { type: 'reconnect'; attempt: number; delayMs: number; reason: string }
  | { type: 'resume'; sessionId: string; seq: number }
  | { type: 'resumed'; seq: number }
  | { type: 'ready'; sessionId: string };

export type DebugListener = (event: DebugEvent) => void;

/** Call the listener, never letting its failure break the SDK. */
export function tell(listener: DebugListener | undefined, event: DebugEvent): void {
  if (!listener) return;
  try {
    listener(event);
  } catch {
    // a logging callback that throws must not stop a request or a connection
  }
}

const badUrl = (message: string): ParleyError => new ParleyError('BAD_URL', message, 0);

/**
 * The server's origin from what a bot author passed: `http://host:port` (any path that is a
 * mistake is refused with a message saying what to pass instead).
 */
export function originOf(url: string | undefined, who: string): string {
  const raw = (url ?? 'http://127.0.0.1:8080').trim();
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badUrl(
      `${who}: url must be the Parley server's origin, like http://127.0.0.1:8080 (got ${JSON.stringify(raw)})`,
    );
  }
  if (!/^(https?|wss?):$/.test(u.protocol))
    throw badUrl(
      `${who}: url must be an http(s) origin, like https://chat.example.org (got ${u.protocol})`,
    );
  const path = u.pathname.replace(/\/+$/, '');
  const http = u.protocol.replace(/^ws/, 'http');
  const wrong = /\/(api\/v\d+|gateway)$/.exec(path);
  if (wrong)
    throw badUrl(
      `${who}: url is the server's origin, without /${wrong[1]}: ` +
        `use ${http}//${u.host}${path.slice(0, wrong.index)}`,
    );
  return `${http}//${u.host}${path}`;
}
