import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { deflateSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import type { Harness, Reply } from './harness.js';

/**
 * Minimal valid files of the six D22 formats, built byte by byte (no fixtures, no tools), and a
 * multipart/form-data body builder that lets tests put anything in a part header (control
 * characters, paths) — what a browser's FormData would refuse or escape.
 */

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = (CRC_TABLE[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const u32be = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

function pngChunk(type: string, data: Buffer): Buffer {
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32be(data.length), td, u32be(crc32(td))]);
}

/** A 1×1 RGB PNG (signature, IHDR, IDAT, IEND with real CRCs). */
export function png(): Buffer {
  const ihdr = Buffer.concat([u32be(1), u32be(1), Buffer.from([8, 2, 0, 0, 0])]);
  const idat = deflateSync(Buffer.from([0, 0xff, 0x80, 0x00]));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', idat),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A 1×1 GIF89a with a two-colour palette. */
export function gif(): Buffer {
  return Buffer.from(
    '474946383961010001008000000000ffffff21f90401000000002c00000000010001000002024401003b',
    'hex',
  );
}

/** A baseline 8×8 grey JPEG: one block, DC 0, end of block (tables of one code each). */
export function jpeg(): Buffer {
  const seg = (marker: number, body: number[]): number[] => [
    0xff,
    marker,
    (body.length + 2) >> 8,
    (body.length + 2) & 0xff,
    ...body,
  ];
  const dht = (cls: number): number[] => [cls, 1, ...new Array<number>(15).fill(0), 0];
  return Buffer.from([
    0xff,
    0xd8,
    ...seg(0xe0, [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]),
    ...seg(0xdb, [0, ...new Array<number>(64).fill(1)]),
    ...seg(0xc0, [8, 0, 8, 0, 8, 1, 1, 0x11, 0]),
    ...seg(0xc4, dht(0x00)),
    ...seg(0xc4, dht(0x10)),
    ...seg(0xda, [1, 1, 0, 0, 0x3f, 0]),
    0x3f,
    0xff,
    0xd9,
  ]);
}

/** 16-bit mono PCM WAV, 8 kHz, `samples` samples of silence. */
export function wav(samples = 8): Buffer {
  const data = Buffer.alloc(samples * 2);
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0); // PCM
  fmt.writeUInt16LE(1, 2); // mono
  fmt.writeUInt32LE(8000, 4);
  fmt.writeUInt32LE(16000, 8); // byte rate
  fmt.writeUInt16LE(2, 12); // block align
  fmt.writeUInt16LE(16, 14); // bits per sample
  const le = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
  };
  return Buffer.concat([
    Buffer.from('RIFF'),
    le(4 + 8 + fmt.length + 8 + data.length),
    Buffer.from('WAVE'),
    Buffer.from('fmt '),
    le(fmt.length),
    fmt,
    Buffer.from('data'),
    le(data.length),
    data,
  ]);
}

/** One MPEG-1 Layer III frame, 128 kbit/s, 44.1 kHz, no CRC: header + silent payload (417 B). */
export function mp3(): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x44]);
  return frame;
}

/** An ISO base media file: `ftyp` (isom) and an empty `mdat` box. */
export function mp4(): Buffer {
  const ftyp = Buffer.concat([
    u32be(24),
    Buffer.from('ftypisom'),
    u32be(0x200),
    Buffer.from('isommp41'),
  ]);
  return Buffer.concat([ftyp, u32be(8), Buffer.from('mdat')]);
}

export const SAMPLES = {
  png: { bytes: png, mime: 'image/png', kind: 1 },
  gif: { bytes: gif, mime: 'image/gif', kind: 1 },
  jpg: { bytes: jpeg, mime: 'image/jpeg', kind: 1 },
  mp3: { bytes: mp3, mime: 'audio/mpeg', kind: 2 },
  wav: { bytes: wav, mime: 'audio/wav', kind: 2 },
  mp4: { bytes: mp4, mime: 'video/mp4', kind: 3 },
} as const;

/** A PNG of exactly `size` bytes (a real PNG followed by filler; sniffing only reads the head). */
export function pngOfSize(size: number, fill?: number): Buffer {
  const head = png();
  if (size < head.length) throw new Error(`a PNG needs at least ${head.length} bytes`);
  const out = Buffer.alloc(size, fill ?? 0);
  head.copy(out);
  if (fill === undefined) randomBytes(Math.min(4096, size - head.length)).copy(out, head.length);
  return out;
}

export interface FormPart {
  name: string;
  /** present: a file part; the raw header value is written as given (no escaping) */
  filename?: string;
  contentType?: string;
  data: Buffer | string;
}

export interface Form {
  contentType: string;
  body: Buffer;
}

/** A multipart/form-data body, written by hand so headers can carry anything. */
export function multipart(
  parts: FormPart[],
  boundary = `----parley${randomBytes(8).toString('hex')}`,
): Form {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    const type =
      p.contentType ?? (p.filename === undefined ? undefined : 'application/octet-stream');
    if (type !== undefined) head += `Content-Type: ${type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`, 'utf8'), Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(chunks) };
}

/** One file in field `file`. */
export const fileForm = (filename: string, data: Buffer): Form =>
  multipart([{ name: 'file', filename, data }]);

/**
 * A multipart body with one file part of `fileBytes` bytes, produced lazily, counting how much
 * the server pulled: the proof that it stopped reading past the limit.
 */
export function streamingForm(
  filename: string,
  fileBytes: number,
): { contentType: string; stream: Readable; pulled: () => number } {
  const boundary = `----parley${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
      `Content-Type: image/png\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const first = pngOfSize(Math.min(fileBytes, 64 * 1024));
  const chunk = Buffer.alloc(64 * 1024, 7);
  let sent = 0;
  let pulled = 0;
  function* gen(): Generator<Buffer> {
    yield head;
    pulled += head.length;
    while (sent < fileBytes) {
      const piece = (sent === 0 ? first : chunk).subarray(0, Math.min(64 * 1024, fileBytes - sent));
      sent += piece.length;
      pulled += piece.length;
      yield piece;
    }
    pulled += tail.length;
    yield tail;
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    stream: Readable.from(gen(), { objectMode: false, highWaterMark: 16 * 1024 }),
    pulled: () => pulled,
  };
}

/** Helpers of the files suites: a real data dir per harness, uploads, CDN reads, disk counts. */

export function freshDataDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-files-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export const upload = (h: Harness, token: string | undefined, form: Form): Promise<Reply> =>
  h.request({
    method: 'POST',
    url: '/api/v1/files/upload',
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      'content-type': form.contentType,
    },
    payload: form.body,
  });

/** GET (or HEAD) a `{cdn_url}` URL through the app; the raw bytes are in `rawPayload`. */
export const cdn = (
  h: Harness,
  url: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'HEAD' = 'GET',
): Promise<LightMyRequestResponse> => h.app.inject({ method, url: new URL(url).pathname, headers });

function walk(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)],
  );
}

/** Committed blobs on disk (the local store's layout: `<data>/files/blobs/<2>/<key>`). */
export const blobFiles = (dataDir: string): string[] => walk(path.join(dataDir, 'files', 'blobs'));

/** Staged (in-progress or left-over) files. */
export const stagedFiles = (dataDir: string): string[] => walk(path.join(dataDir, 'files', 'tmp'));
