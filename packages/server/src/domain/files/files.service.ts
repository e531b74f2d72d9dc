import type { UploadedFile, UploadQuota } from '@parley/protocol';
import { AppError } from '../../errors/app-error.js';
import type { BlobStore, BlobWriter } from '../../files/blob-store.js';
import type { Principal } from '../auth/principal.js';
import type { Domain, Urls } from '../context.js';
import { sanitizeFilename } from './filename.js';
import { imageDimensions } from './dimensions.js';
import { ACCEPTED, FileKind, SNIFF_BYTES, sniffFormat } from './formats.js';
import { quotaLimits, quotaUsage, reserveQuota } from './quota.js';

/** D22: at most 5 MiB per file. */
export const MAX_FILE_BYTES = 5 * 1024 * 1024;

export const fileTooLarge = (): AppError =>
  new AppError('PAYLOAD_TOO_LARGE', `A file may be at most ${MAX_FILE_BYTES} bytes (5 MiB)`);

const unsupported = (why: string): AppError => new AppError('UNSUPPORTED_MEDIA_TYPE', why);

/** D23: the one form of a file's address, `{cdn_url}/files/<id>/<filename>`. */
export const fileUrl = (urls: Urls, id: number, filename: string): string =>
  `${urls.cdn}/files/${id}/${encodeURIComponent(filename)}`;

/** A file that arrived completely and sits staged in the blob store, not yet accepted. */
export interface ReceivedFile {
  readonly blob: BlobWriter;
  readonly size: number;
  /** the first bytes, for sniffing */
  readonly head: Buffer;
  readonly rawName: string;
}

/**
 * Stream one file into a new staged blob. Stops at the first byte past MAX_FILE_BYTES (413)
 * without reading further; on any failure the staged bytes are dropped.
 */
export async function receiveFile(
  blobs: BlobStore,
  source: AsyncIterable<Buffer>,
  rawName: string,
): Promise<ReceivedFile> {
  const blob = await blobs.create();
  let size = 0;
  const head: Buffer[] = [];
  let headBytes = 0;
  try {
    for await (const chunk of source) {
      size += chunk.length;
      if (size > MAX_FILE_BYTES) throw fileTooLarge();
      if (headBytes < SNIFF_BYTES) {
        const part = chunk.subarray(0, SNIFF_BYTES - headBytes);
        head.push(Buffer.from(part));
        headBytes += part.length;
      }
      await blob.write(chunk);
    }
  } catch (err) {
    await blob.abort();
    throw err;
  }
  return { blob, size, head: Buffer.concat(head), rawName };
}

/**
 * Accept a received file: check its content and name (D22: 415), charge the quota (D24: 429)
 * and record it. The blob is placed first and the row committed second: a crash in between
 * leaves an unreferenced blob (never served, never charged), not a row without its bytes. Any
 * failure drops the blob; the quota charge and the row share one transaction, so a failed
 * upload never keeps its reservation.
 */
export async function acceptUpload(
  d: Domain,
  p: Principal,
  file: ReceivedFile,
): Promise<UploadedFile> {
  try {
    const format = await sniffFormat(file.head);
    if (!format) throw unsupported(`The file is not one of the accepted formats (${ACCEPTED})`);
    const name = sanitizeFilename(file.rawName);
    if (!format.extensions.includes(name.ext))
      throw unsupported(
        `The file name must end in .${format.extensions.join(' or .')} for this ${format.type} content`,
      );
    // D61: an image's dimensions from its own bytes (the first 64 KiB hold the header of all
    // but JPEGs with huge metadata, which then go without).
    const dims = format.kind === FileKind.IMAGE ? imageDimensions(file.head) : undefined;
    await file.blob.commit();
    const id = d.ids.next();
    const now = d.clock.now();
    await d.db.transaction().execute(async (trx) => {
      const period = await reserveQuota(trx, quotaLimits(d.config), p.userId, file.size, now);
      await trx
        .insertInto('files')
        .values({
          id,
          owner_id: p.userId,
          storage_key: file.blob.key,
          filename: name.name,
          size: file.size,
          kind: format.kind,
          mime: format.mime,
          width: dims?.width ?? null,
          height: dims?.height ?? null,
          quota_day: period.day,
          quota_month: period.month,
          created_at: now,
        })
        .execute();
    });
    return { url: fileUrl(d.urls, id, name.name), filename: name.name, size: file.size };
  } catch (err) {
    await file.blob.abort();
    throw err;
  }
}

export const getQuota = (d: Domain, p: Principal): Promise<UploadQuota> =>
  quotaUsage(d.db, quotaLimits(d.config), p.userId, d.clock.now());

export interface StoredFile {
  id: number;
  storage_key: string;
  filename: string;
  size: number;
  kind: number;
  mime: string;
  width: number | null;
  height: number | null;
  created_at: number;
}

/** A file by its public id, or undefined. */
export async function findFile(d: Domain, id: number): Promise<StoredFile | undefined> {
  return d.db
    .selectFrom('files')
    .select([
      'id',
      'storage_key',
      'filename',
      'size',
      'kind',
      'mime',
      'width',
      'height',
      'created_at',
    ])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A canonical decimal id (D4) that is a safe integer, else undefined. */
export function parseFileId(s: string): number | undefined {
  if (!/^[1-9][0-9]{0,15}$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Blobs no file row refers to: an upload placed its bytes, then the process died before the row
 * committed (acceptUpload places first, records second). Nothing serves them; this frees the disk.
 * Only blobs older than `graceMs` are considered, so an upload still finishing — on this process
 * or another one sharing the directory — keeps its bytes. Returns how many were removed.
 */
export async function sweepOrphanBlobs(
  d: Domain,
  blobs: BlobStore,
  graceMs = 3_600_000,
): Promise<number> {
  let removed = 0;
  for await (const key of blobs.committedBefore(d.clock.now() - graceMs)) {
    const row = await d.db
      .selectFrom('files')
      .select('id')
      .where('storage_key', '=', key)
      .executeTakeFirst();
    if (row) continue;
    // D71: a link preview's image, kept by the CDN's proxy
    const proxied = await d.db
      .selectFrom('proxied_images')
      .select('id')
      .where('storage_key', '=', key)
      .executeTakeFirst();
    if (proxied) continue;
    await blobs.delete(key);
    removed++;
  }
  return removed;
}
