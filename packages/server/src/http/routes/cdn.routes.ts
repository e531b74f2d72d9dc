import { createHash } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { renderDefaultAvatar } from '../../assets/default-avatar.js';
import { findFile, parseFileId } from '../../domain/files/files.service.js';
import { AppError } from '../../errors/app-error.js';
import { contentDisposition, parseRange } from '../../files/http-serving.js';
import type { AppDeps } from '../app.js';

/** Uploaded files never change under their id: caches may keep them for a year (D23). */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The D5 error form for 416, which has no code of its own in the REST table. */
function rangeNotSatisfiable(reply: FastifyReply, size: number): FastifyReply {
  return reply
    .code(416)
    .header('content-range', `bytes */${size}`)
    .type('application/json; charset=utf-8')
    .send({
      error: { code: 'RANGE_NOT_SATISFIABLE', message: `The file has ${size} bytes` },
    });
}

const etagMatches = (header: string | undefined, etag: string): boolean =>
  header !== undefined &&
  (header.trim() === '*' || header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag));

/** {cdn_url} (D1). Not rate limited (D26): it lives outside /api/v1. */
export const cdnRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const avatar = renderDefaultAvatar();
  const etag = `"${createHash('sha256').update(avatar).digest('base64url').slice(0, 22)}"`;
  app.get('/avatars/default.png', { schema: { hide: true } }, async (req, reply) => {
    reply
      .header('content-type', 'image/png')
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'public, max-age=86400')
      .header('etag', etag);
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.send(avatar);
  });

  /**
   * D71: link previews' images, fetched once by the server: a reader's browser never contacts
   * the linked site. Served as uploads are (type sniffed when fetched, nosniff, sandboxed).
   */
  app.get<{ Params: { id: string } }>(
    '/proxy/:id',
    { schema: { hide: true } },
    async (req, reply) => {
      const id = parseFileId(req.params.id);
      const img =
        id === undefined
          ? undefined
          : await deps.domain.db
              .selectFrom('proxied_images')
              .select(['id', 'storage_key', 'mime', 'size'])
              .where('id', '=', id)
              .executeTakeFirst();
      const body = img ? await deps.blobs.read(img.storage_key) : undefined;
      if (!img || !body) throw new AppError('NOT_FOUND', 'No such image');
      return reply
        .header('content-type', img.mime)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', IMMUTABLE)
        .header('content-length', String(img.size))
        .send(body);
    },
  );

  /**
   * D23: uploaded files. The bytes go out with the type sniffed at upload, never sniffed again by
   * the browser (nosniff) and never able to run script in our origin (CSP sandbox), whatever
   * they contain. GET and HEAD, byte ranges for seeking.
   */
  app.route<{ Params: { id: string; filename: string } }>({
    method: ['GET', 'HEAD'],
    url: '/files/:id/:filename',
    schema: { hide: true },
    handler: async (req, reply) => {
      const id = parseFileId(req.params.id);
      const file = id === undefined ? undefined : await findFile(deps.domain, id);
      // Unknown id, malformed id or a name other than the one issued: all simply not there.
      if (!file || file.filename !== req.params.filename)
        throw new AppError('NOT_FOUND', 'No such file');

      const tag = `"${file.id.toString(36)}-${file.size.toString(36)}"`;
      // If-Range with another validator: the client's partial copy is stale, send it all.
      const ifRange = req.headers['if-range'];
      const range =
        ifRange !== undefined && String(ifRange).trim() !== tag
          ? ({ kind: 'full' } as const)
          : parseRange(req.headers.range, file.size);
      // RFC 9110 §13.2.2: If-None-Match is decided before Range.
      const notModified = etagMatches(req.headers['if-none-match'], tag);
      if (!notModified && range.kind === 'unsatisfiable')
        return rangeNotSatisfiable(reply, file.size);
      const span = range.kind === 'partial' ? range : { start: 0, end: file.size - 1 };

      // Opened before any header is set, so a failure is a clean error answer.
      const body =
        req.method === 'HEAD' || notModified
          ? undefined
          : await deps.blobs.read(file.storage_key, span);
      if (req.method === 'GET' && !notModified && !body) {
        // A row without its bytes should not exist (blobs are placed before rows commit).
        req.log.error({ fileId: file.id }, 'blob missing for a stored file');
        throw new AppError('NOT_FOUND', 'No such file');
      }

      reply
        .header('content-type', file.mime)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('content-disposition', contentDisposition(file.filename))
        .header('cache-control', IMMUTABLE)
        .header('etag', tag)
        .header('last-modified', new Date(file.created_at).toUTCString())
        .header('accept-ranges', 'bytes');
      if (notModified) return reply.code(304).send();
      if (range.kind === 'partial')
        reply.code(206).header('content-range', `bytes ${span.start}-${span.end}/${file.size}`);
      reply.header('content-length', String(span.end - span.start + 1));
      if (!body) return reply.send();
      return reply.send(body);
    },
  });
};
