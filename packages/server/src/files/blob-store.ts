import path from 'node:path';
import type { Readable } from 'node:stream';
import { LocalBlobStore } from './local-blob-store.js';

/**
 * Where uploaded bytes live (docs/architecture.md: infrastructure with two forms sits behind a small
 * interface). The local directory under the data dir is the default; an S3-compatible store can
 * implement the same contract later (create = multipart upload to a staging key, commit =
 * complete + copy, read = ranged GET).
 *
 * The contract that keeps a crash harmless: bytes are staged out of sight while they arrive and
 * only `commit()` makes them readable under their key, all at once — a reader never sees half a
 * file. Keys are random and chosen by the store, never derived from client input.
 */
export interface BlobStore {
  /** Start a new blob. Nothing is readable under its key until `commit()`. */
  create(): Promise<BlobWriter>;
  /**
   * A stream of the blob's bytes, `start`–`end` inclusive when a range is given; undefined when
   * there is no such (committed) blob.
   */
  read(key: string, range?: { start: number; end: number }): Promise<Readable | undefined>;
  /** Remove a committed blob (no error when it is already gone). */
  delete(key: string): Promise<void>;
  /** Keys of committed blobs last written before `beforeMs` (epoch ms), in no order. */
  committedBefore(beforeMs: number): AsyncIterable<string>;
}

export interface BlobWriter {
  readonly key: string;
  /**
   * Append bytes (resolves when the store accepted them: backpressure for the caller). The store
   * may hold on to `chunk` until commit: do not reuse its memory.
   */
  write(chunk: Uint8Array): Promise<void>;
  /** Make the blob durable and readable under `key`, atomically. */
  commit(): Promise<void>;
  /**
   * Forget the blob: staged bytes are dropped, a committed blob is deleted. Safe to call at any
   * point and more than once; never throws.
   */
  abort(): Promise<void>;
}

/** The configured store: for now the local directory `<data dir>/files`. */
export async function openBlobStore(config: { dataDir: string }): Promise<BlobStore> {
  return LocalBlobStore.open(path.join(config.dataDir, 'files'));
}
