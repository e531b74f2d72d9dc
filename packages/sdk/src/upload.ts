import { basename } from 'node:path';
import type { MsgType } from './rest.js';

/** D22: at most 5 MiB per file. */
export const MAX_FILE_BYTES = 5 * 1024 * 1024;

/** What can be uploaded: a file path, bytes, a Blob, or a stream of bytes (Node or web). */
export type UploadSource =
  | string
  | Uint8Array
  | ArrayBuffer
  | Blob
  | AsyncIterable<Uint8Array | string>
  | ReadableStream<Uint8Array>;

export interface UploadOptions {
  /** the file name (its extension must match the content, D22); required except for paths */
  filename?: string;
  /** the Content-Type of the part (default: from the extension) */
  contentType?: string;
}

/** D22 formats by extension, with the msgType (D15) a message showing them carries. */
const FORMATS: Record<string, { type: string; msgType: MsgType }> = {
  jpg: { type: 'image/jpeg', msgType: 1 },
  jpeg: { type: 'image/jpeg', msgType: 1 },
  png: { type: 'image/png', msgType: 1 },
  gif: { type: 'image/gif', msgType: 1 },
  mp3: { type: 'audio/mpeg', msgType: 2 },
  wav: { type: 'audio/wav', msgType: 2 },
  mp4: { type: 'video/mp4', msgType: 3 },
};

const extOf = (name: string): string =>
  /\.([A-Za-z0-9]+)$/.exec(name.split('?')[0] ?? '')?.[1]?.toLowerCase() ?? '';

/**
 * D15: the msgType of a message whose content is this uploaded file (by its name or URL):
 * 1 image (jpg, png, gif), 2 audio (mp3, wav), 3 video (mp4).
 */
export function msgTypeOf(filenameOrUrl: string): MsgType {
  const f = FORMATS[extOf(filenameOrUrl)];
  if (!f)
    throw new TypeError(
      `not an uploadable format (D22: jpg, png, gif, mp3, wav, mp4): ${filenameOrUrl}`,
    );
  return f.msgType;
}

export async function toUploadBlob(
  source: UploadSource,
  opts: UploadOptions,
): Promise<{ blob: Blob; filename: string }> {
  let filename = opts.filename;
  let blob: Blob;
  if (typeof source === 'string') {
    filename ??= basename(source);
    const { openAsBlob } = await import('node:fs');
    blob = await openAsBlob(source);
  } else if (source instanceof Blob) {
    blob = source;
  } else if (source instanceof Uint8Array || source instanceof ArrayBuffer) {
    blob = new Blob([source]);
  } else {
    // A stream: read it (a file is at most 5 MiB; more is refused here, before sending).
    const chunks: Uint8Array[] = [];
    let size = 0;
    const iterable: AsyncIterable<Uint8Array | string> =
      Symbol.asyncIterator in source ? source : readableToIterable(source);
    for await (const c of iterable) {
      const bytes = typeof c === 'string' ? new TextEncoder().encode(c) : c;
      size += bytes.byteLength;
      if (size > MAX_FILE_BYTES) throw new RangeError('a file may be at most 5 MiB (D22)');
      chunks.push(bytes);
    }
    blob = new Blob(chunks);
  }
  if (filename === undefined)
    throw new TypeError('upload: `filename` is required for bytes and streams');
  const type = opts.contentType ?? FORMATS[extOf(filename)]?.type ?? 'application/octet-stream';
  if (blob.type !== type) blob = new Blob([blob], { type });
  return { blob, filename };
}

async function* readableToIterable(s: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = s.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}
