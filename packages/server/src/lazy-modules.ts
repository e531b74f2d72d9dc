/**
 * Packages a running server may never need, imported on their first use rather than at start.
 * Each one loaded is heap, compiled code and resident memory for the life of the process:
 * undici alone is ~4.5 MiB of heap, and together these were ~10 MiB of the resident memory after
 * start (bench idle: RSS after start ≤ 100 MiB) — on a server with no webhook bots, nobody who
 * enabled notifications, no link posted, no upload and no sign-in provider, they are never
 * needed. The rest of the server imports them only through here: one loader per package, its
 * import started once and shared.
 */
function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => (loading ??= load());
}

/** webhooks, Web Push and link previews' HTTP client (webhooks/guarded-agent.ts) */
export const loadUndici = onFirstUse(() => import('undici'));
/** D66: Web Push's encryption and VAPID signatures */
export const loadWebPush = onFirstUse(async () => (await import('web-push')).default);
/** D70: sign-in with an identity provider */
export const loadOpenidClient = onFirstUse(() => import('openid-client'));
/** D71: reading a linked page's metadata */
export const loadHtmlParser = onFirstUse(() => import('htmlparser2'));
/** D61: what an upload is, from its bytes */
export const loadFileType = onFirstUse(() => import('file-type'));
/**
 * Redis (45 modules): only a node with PARLEY_REDIS_URL uses it (issue #6: a single-node server
 * carries no Redis client code)
 */
export const loadIoredis = onFirstUse(() => import('ioredis'));
