import type { FastifyRequest } from 'fastify';

/**
 * D54: `token`, `sessionId` and password values never appear in logs. Headers are redacted by
 * path (pino `redact`); query values are replaced in the URL a request is logged with (a token in
 * the query is ignored, D9, but it must not leak into the log either); body fields by name.
 */
const SECRET_PARAMS = new Set([
  'token',
  'access_token',
  'sessionid',
  'session_id',
  'password',
  'secret',
  // D69: the OpenID provider's authorization code in the callback's query (single use, but a
  // credential until it is used)
  'code',
]);

export const REDACTED = '[REDACTED]';

/** Pino `redact` paths: secret headers, and password/token fields wherever something logs them. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'password',
  '*.password',
  '*.*.password',
  'token',
  '*.token',
  '*.*.token',
  'sessionId',
  '*.sessionId',
];

/** The URL with the values of secret query parameters replaced (names compared decoded, any case). */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url.slice(q + 1);
  const parts = query.split('&').map((part) => {
    const eq = part.indexOf('=');
    const rawName = eq < 0 ? part : part.slice(0, eq);
    let name = rawName;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      // a malformed escape: judge the name as written
    }
    return SECRET_PARAMS.has(name.trim().toLowerCase()) ? `${rawName}=${REDACTED}` : part;
  });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

/** Fastify's default request serializer, with the URL redacted. */
export function requestSerializer(req: FastifyRequest): Record<string, unknown> {
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket ? req.socket.remotePort : undefined,
  };
}
