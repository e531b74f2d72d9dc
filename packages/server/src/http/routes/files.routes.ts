import type { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { UploadedFile, UploadQuota } from '@parley/protocol';
import {
  acceptUpload,
  fileTooLarge,
  getQuota,
  MAX_FILE_BYTES,
  receiveFile,
  type ReceivedFile,
} from '../../domain/files/files.service.js';
import { AppError, invalid } from '../../errors/app-error.js';
import type { BlobStore } from '../../files/blob-store.js';
import type { ApiPlugin } from '../app.js';
import { principalOf } from '../plugins/auth.js';
import { responses } from '../schemas.js';

/**
 * Room for the multipart framing and the ignored text fields around the file: a request larger
 * than file limit + this is refused (413) without reading it, and reading stops once a body
 * without Content-Length (chunked) grows past it.
 */
const FORM_OVERHEAD_BYTES = 256 * 1024;
export const MAX_UPLOAD_REQUEST_BYTES = MAX_FILE_BYTES + FORM_OVERHEAD_BYTES;

/**
 * Busboy's own limits back ours up. The file limit is one byte past D22's so that our counter
 * (receiveFile) is the one that sees byte 5 MiB + 1 and stops; `files: 1` makes a second file an
 * error as soon as its header arrives.
 */
const MULTIPART_LIMITS = {
  fileSize: MAX_FILE_BYTES + 1,
  files: 1,
  fields: 32,
  fieldSize: 4096,
  fieldNameSize: 200,
  parts: 40,
  headerPairs: 16,
};

const MULTIPART = /^multipart\/form-data\s*(;|$)/i;

const malformed = (): AppError => new AppError('VALIDATION_ERROR', 'Malformed multipart body');

/** Errors of @fastify/multipart and busboy, in our codes (D6). */
function multipartError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  switch ((err as { code?: string } | null)?.code) {
    case 'FST_FILES_LIMIT':
      return invalid('file', 'exactly one file may be uploaded per request');
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new AppError('PAYLOAD_TOO_LARGE', 'Too many parts in the multipart body');
    case 'FST_REQ_FILE_TOO_LARGE':
      return fileTooLarge();
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_JSON_FIELD_ERROR':
    case 'FST_MP_PREMATURE_CLOSE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return malformed();
  }
  const message = err instanceof Error ? err.message : '';
  if (/multipart|boundary|needle|terminated early|part header/i.test(message)) return malformed();
  return err;
}

/**
 * D22: read the one file of an upload into a staged blob. Text fields are ignored; no file, a
 * file in another field, or a second file → 400. When the request is refused before its end,
 * reading stops at once (nothing past the limit is taken off the wire) and the answer closes the
 * connection.
 */
async function readUpload(
  req: FastifyRequest,
  reply: FastifyReply,
  blobs: BlobStore,
): Promise<ReceivedFile> {
  const raw = req.raw;
  let current: Readable | undefined;
  let receiving: Promise<ReceivedFile> | undefined;
  let stopped = false;
  let fail: (err: AppError) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {});
  const stopReading = (): void => {
    if (stopped) return;
    stopped = true;
    raw.unpipe();
    raw.pause();
    if (!raw.readableEnded) reply.header('connection', 'close');
  };

  const it = req.parts({ limits: MULTIPART_LIMITS })[Symbol.asyncIterator]();
  // The first next() pipes the request into busboy; the byte counter joins after it.
  let next = it.next();
  let total = 0;
  const onData = (chunk: Buffer): void => {
    total += chunk.length;
    if (total <= MAX_UPLOAD_REQUEST_BYTES || stopped) return;
    const err = new AppError('PAYLOAD_TOO_LARGE', 'The upload request is too large');
    stopReading();
    current?.destroy(err);
    fail(err);
  };
  raw.on('data', onData);
  try {
    for (;;) {
      const step = await Promise.race([next, failed]);
      if (step.done) break;
      const part = step.value;
      // D22: other text fields are ignored.
      if (part.type === 'file') {
        if (receiving) throw invalid('file', 'exactly one file may be uploaded per request');
        if (part.fieldname !== 'file')
          throw invalid('file', 'the file must be sent in the multipart field "file"');
        current = part.file;
        receiving = receiveFile(blobs, part.file, part.filename);
        await Promise.race([receiving, failed]);
        current = undefined;
      }
      next = it.next();
    }
    if (!receiving) throw invalid('file', 'a file in the multipart field "file" is required');
    return await receiving;
  } catch (err) {
    stopReading();
    current?.destroy();
    // A file that was (or is still being) received is dropped before the answer goes out:
    // a refused upload leaves nothing behind, not even staged bytes.
    await receiving?.then(
      (f) => f.blob.abort(),
      () => {},
    );
    throw multipartError(err);
  } finally {
    raw.off('data', onData);
  }
}

/** POST /files/upload and GET /files/quota (docs/interface.md#endpoints; D22, D24). */
export const fileRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  // Registered in this plugin only: other routes keep answering multipart with 415, and the
  // upload route never sees the JSON parser (its body is streamed, not parsed).
  await app.register(multipart, { throwFileSizeLimit: false, limits: MULTIPART_LIMITS });

  app.post(
    '/files/upload',
    {
      schema: {
        tags: ['files'],
        summary:
          'Upload one file (multipart/form-data, field "file"; jpg, png, gif, mp3, wav, mp4; ≤ 5 MiB) (D22, D24)',
        consumes: ['multipart/form-data'],
        response: responses({ 200: UploadedFile }),
      },
      onRequest: async (req) => {
        if (!MULTIPART.test(req.headers['content-type'] ?? ''))
          throw new AppError(
            'UNSUPPORTED_MEDIA_TYPE',
            'Upload with Content-Type multipart/form-data, the file in field "file"',
          );
        const length = Number(req.headers['content-length']);
        // D6: refused before a byte of the body is read; closing spares reading the rest.
        if (length > MAX_UPLOAD_REQUEST_BYTES)
          throw new AppError(
            'PAYLOAD_TOO_LARGE',
            `A file may be at most ${MAX_FILE_BYTES} bytes (5 MiB)`,
            { headers: { connection: 'close' } },
          );
      },
    },
    async (req, reply) => {
      const received = await readUpload(req, reply, deps.blobs);
      return acceptUpload(d, principalOf(req), received);
    },
  );

  app.get(
    '/files/quota',
    {
      schema: {
        tags: ['files'],
        summary: 'Upload quota of the caller: daily and monthly, used and limit (D24)',
        response: responses({ 200: UploadQuota }),
      },
    },
    async (req) => getQuota(d, principalOf(req)),
  );
};
