import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import type { AppDeps } from '../app.js';
import { sendError } from '../plugins/error-handler.js';

/**
 * D55: the web app (packages/web, built to static files) served by this process at `/`, on the
 * same origin as /api, /app, /cdn and the gateway.
 *
 * - `/assets/*` are Vite's content-hashed files: cached for a year, immutable.
 * - `index.html` (at `/` and at every client-side route) is revalidated on each load (no-cache +
 *   ETag), so a new build is picked up at once.
 * - Every answer carries a strict CSP: scripts, styles and fonts from this origin only (no inline
 *   script), images and media from this origin (uploads live under /cdn) plus blob:/data: for
 *   local previews, connections to this origin and its ws:// twin (the gateway).
 * - A GET for any other unknown path outside the server's own prefixes serves the app (its router
 *   draws the page); unknown API paths keep their D2/D5 404 or 405 (plugins/not-found.ts).
 * - Without a build (tests that do not build it, a clone where the build failed), `/` answers a
 *   D5 503 saying how to build it; nothing crashes.
 */
export interface WebRoutesOptions {
  deps: AppDeps;
  /** the built app; default: packages/web/dist of the @parley/web workspace */
  dir?: string | undefined;
}

/** Paths the server owns: never answered with the app (D55). */
const SERVER_PREFIXES = [
  '/api',
  '/app',
  '/admin',
  '/cdn',
  '/gateway',
  '/docs',
  '/openapi.json',
  '/healthz',
  '/readyz',
  '/metrics',
];

/** Case-insensitive: `/API/V1/…` is a mistyped API call, not a page of the app. */
export const isServerPath = (p: string): boolean => {
  const lower = p.toLowerCase();
  return SERVER_PREFIXES.some((x) => lower === x || lower.startsWith(`${x}/`));
};

const IMMUTABLE = 'public, max-age=31536000, immutable';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt', '.webmanifest']);

interface Asset {
  body: Buffer;
  gzip: Buffer | undefined;
  type: string;
  etag: string;
  mtimeMs: number;
}

/** The default location: the `dist` folder next to @parley/web's package.json. */
function defaultDir(): string | undefined {
  try {
    const pkg = createRequire(import.meta.url).resolve('@parley/web/package.json');
    return path.join(path.dirname(pkg), 'dist');
  } catch {
    return undefined;
  }
}

function readAsset(file: string): Asset | undefined {
  let st;
  try {
    st = statSync(file);
  } catch {
    return undefined;
  }
  if (!st.isFile()) return undefined;
  const body = readFileSync(file);
  const ext = path.extname(file).toLowerCase();
  return {
    body,
    // Compressed once, kept: the app is a few hundred KiB at most.
    gzip: COMPRESSIBLE.has(ext) && body.length > 512 ? gzipSync(body, { level: 9 }) : undefined,
    type: TYPES[ext] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    mtimeMs: st.mtimeMs,
  };
}

/** D55's policy; `connect-src` names the gateway's ws(s) origin besides 'self'. */
export function contentSecurityPolicy(origin: string): string {
  const ws = origin.replace(/^http/, 'ws');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob: data:",
    "media-src 'self' blob:",
    "font-src 'self'",
    `connect-src 'self' ${ws}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const webRoutes: FastifyPluginAsync<WebRoutesOptions> = async (app, opts) => {
  const dir = opts.dir ?? defaultDir();
  const urls = opts.deps.domain.urls;
  // Hashed assets never change under their name; index.html and the root files are re-read
  // when the build changes (a rebuild while the server runs is picked up, not half-served).
  const cache = new Map<string, Asset>();

  const load = (rel: string): Asset | undefined => {
    if (dir === undefined) return undefined;
    const file = path.join(dir, rel);
    const hit = cache.get(rel);
    if (hit && rel.startsWith('assets/')) return hit;
    if (hit) {
      try {
        if (statSync(file).mtimeMs === hit.mtimeMs) return hit;
      } catch {
        cache.delete(rel);
        return undefined;
      }
    }
    const a = readAsset(file);
    if (a) cache.set(rel, a);
    else cache.delete(rel);
    return a;
  };

  const send = (
    req: FastifyRequest,
    reply: FastifyReply,
    asset: Asset,
    cacheControl: string,
  ): FastifyReply => {
    reply
      .header('content-security-policy', contentSecurityPolicy(urls.origin))
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .header('cache-control', cacheControl)
      .header('etag', asset.etag)
      .header('content-type', asset.type);
    if (asset.gzip) reply.header('vary', 'accept-encoding');
    const inm = req.headers['if-none-match'];
    if (inm !== undefined && inm.split(',').some((t) => t.trim() === asset.etag))
      return reply.code(304).send();
    const accept = req.headers['accept-encoding'];
    if (asset.gzip && typeof accept === 'string' && /\bgzip\b/.test(accept))
      return reply.header('content-encoding', 'gzip').send(asset.gzip);
    return reply.send(asset.body);
  };

  const index = (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const asset = load('index.html');
    if (!asset) {
      return sendError(
        reply.header('retry-after', '5'),
        new AppError(
          'SERVICE_UNAVAILABLE',
          'The web app is not built: run `npm run build -w @parley/web` (npm install and ' +
            'npm start build it too), then reload',
        ),
        req.id,
      );
    }
    return send(req, reply, asset, 'no-cache');
  };

  app.get('/', { schema: { hide: true } }, index);

  app.get<{ Params: { '*': string } }>(
    '/assets/*',
    { schema: { hide: true } },
    async (req, reply) => {
      const name = req.params['*'];
      // Only plain file names below assets/: no traversal, no dot files.
      const asset =
        /^[\w.-]+(\/[\w.-]+)*$/.test(name) && !name.includes('..')
          ? load(`assets/${name}`)
          : undefined;
      if (!asset) throw new AppError('NOT_FOUND', 'No such asset');
      return send(req, reply, asset, IMMUTABLE);
    },
  );

  // D55: any other GET/HEAD the router does not know, outside the server's prefixes — a root
  // file of the build (favicon.svg) or a client-side route (/invite/abc, /g/1/2, /bots/3).
  app.notFoundFallback.handler = (req, reply) => {
    const p = req.url.split('?')[0] ?? '/';
    if (isServerPath(p)) return undefined;
    const root = /^\/[\w-]+\.[\w.]+$/.test(p) ? load(p.slice(1)) : undefined;
    if (root) return send(req, reply, root, 'no-cache');
    return index(req, reply);
  };
};
