import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { BlobStore, BlobWriter } from './blob-store.js';

/** Keys are 128 random bits in hex: nothing a client sends ever becomes part of a path. */
const KEY = /^[0-9a-f]{32}$/;

/** Staging directories of stores alive in this process (several test apps may share one). */
const liveStaging = new Set<string>();

const isMissing = (err: unknown): boolean => (err as { code?: string }).code === 'ENOENT';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as { code?: string }).code === 'EPERM';
  }
}

/**
 * Blobs as files under `<root>/blobs/<2 hex>/<key>`. A blob is written to
 * `<root>/tmp/<host>.<pid>.<n>/<key>`, flushed to disk (fsync), then renamed into place: rename
 * is atomic, so after a crash a blob is either complete or absent, never half there. Staging
 * directories of processes that are gone (crashed) are swept when a store opens.
 */
export class LocalBlobStore implements BlobStore {
  private readonly blobsDir: string;
  private readonly stagingDir: string;
  private readonly shards = new Set<string>();
  private stagingReady: Promise<void> | undefined;

  private constructor(private readonly root: string) {
    this.blobsDir = path.join(root, 'blobs');
    this.stagingDir = path.join(
      root,
      'tmp',
      `${hostname()}.${process.pid}.${randomBytes(4).toString('hex')}`,
    );
  }

  static async open(root: string): Promise<LocalBlobStore> {
    const store = new LocalBlobStore(path.resolve(root));
    await store.sweepDeadStaging();
    liveStaging.add(store.stagingDir);
    return store;
  }

  /** Where a committed blob lives (tests and tools look; nothing else builds these paths). */
  pathOf(key: string): string {
    if (!KEY.test(key)) throw new Error('invalid blob key');
    return path.join(this.blobsDir, key.slice(0, 2), key);
  }

  /** Directory of committed blobs (tests count files here). */
  get blobsRoot(): string {
    return this.blobsDir;
  }

  get stagingRoot(): string {
    return path.join(this.root, 'tmp');
  }

  async create(): Promise<BlobWriter> {
    this.stagingReady ??= mkdir(this.stagingDir, { recursive: true, mode: 0o700 }).then(
      () => undefined,
    );
    await this.stagingReady;
    const key = randomBytes(16).toString('hex');
    const staged = path.join(this.stagingDir, key);
    // wx: never follow or reuse an existing path.
    const fh = await open(staged, 'wx', 0o600);
    return new LocalBlobWriter(this, key, staged, fh);
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable | undefined> {
    if (!KEY.test(key)) return undefined;
    let fh: FileHandle;
    try {
      fh = await open(this.pathOf(key), 'r');
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    // The handle is open, so the stream cannot fail with ENOENT after headers were sent.
    return createReadStream('', {
      fd: fh,
      ...(range ? { start: range.start, end: range.end } : {}),
      highWaterMark: 256 * 1024,
    });
  }

  async *committedBefore(beforeMs: number): AsyncIterable<string> {
    let shards: string[];
    try {
      shards = await readdir(this.blobsDir);
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    for (const shard of shards) {
      let keys: string[];
      try {
        keys = await readdir(path.join(this.blobsDir, shard));
      } catch (err) {
        if (isMissing(err)) continue;
        throw err;
      }
      for (const key of keys) {
        if (!KEY.test(key)) continue;
        try {
          if ((await stat(this.pathOf(key))).mtimeMs < beforeMs) yield key;
        } catch (err) {
          if (!isMissing(err)) throw err;
        }
      }
    }
  }

  async delete(key: string): Promise<void> {
    if (!KEY.test(key)) return;
    await unlink(this.pathOf(key)).catch((err: unknown) => {
      if (!isMissing(err)) throw err;
    });
  }

  /** Move a staged file into place (called by the writer). */
  async place(staged: string, key: string): Promise<void> {
    const shard = path.join(this.blobsDir, key.slice(0, 2));
    if (!this.shards.has(shard)) {
      await mkdir(shard, { recursive: true, mode: 0o700 });
      this.shards.add(shard);
    }
    await rename(staged, this.pathOf(key));
  }

  /**
   * Staging directories are named `<host>.<pid>.<n>`. One of this host whose process is gone
   * (or is this process, but not a live store of it: a previous run that got the same pid, as in
   * containers) holds only leftovers of interrupted uploads: remove it. Other hosts' directories
   * (a shared volume) are theirs to sweep.
   */
  private async sweepDeadStaging(): Promise<void> {
    const tmp = path.join(this.root, 'tmp');
    let entries: string[];
    try {
      entries = await readdir(tmp);
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    const host = hostname();
    for (const name of entries) {
      const m = /^(.+)\.([0-9]+)\.[0-9a-f]+$/.exec(name);
      if (!m || m[1] !== host) continue;
      const pid = Number(m[2]);
      const dir = path.join(tmp, name);
      const dead = pid === process.pid ? !liveStaging.has(dir) : !processAlive(pid);
      if (dead) await rm(dir, { recursive: true, force: true });
    }
  }
}

/**
 * Chunks are gathered up to this many bytes and written with one writev: a socket hands over
 * 16–64 KiB at a time, and each file write is a round trip to the thread pool.
 */
const WRITE_BATCH_BYTES = 512 * 1024;

class LocalBlobWriter implements BlobWriter {
  private state: 'open' | 'committed' | 'gone' = 'open';
  private closed = false;
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly store: LocalBlobStore,
    readonly key: string,
    private readonly staged: string,
    private readonly fh: FileHandle,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    if (this.state !== 'open') throw new Error('blob is not open for writing');
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= WRITE_BATCH_BYTES) await this.flush();
  }

  private async flush(): Promise<void> {
    let buffers = this.pending;
    let left = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    while (left > 0) {
      const { bytesWritten } = await this.fh.writev(buffers);
      left -= bytesWritten;
      if (left > 0) buffers = [Buffer.concat(buffers).subarray(bytesWritten)];
    }
  }

  async commit(): Promise<void> {
    if (this.state !== 'open') throw new Error('blob is not open for writing');
    await this.flush();
    // Durable before visible: an acknowledged upload survives more than a process crash
    // (datasync: the bytes and the size, not the timestamps).
    await this.fh.datasync();
    await this.close();
    await this.store.place(this.staged, this.key);
    this.state = 'committed';
  }

  async abort(): Promise<void> {
    const was = this.state;
    this.state = 'gone';
    try {
      await this.close();
      if (was === 'open') await unlink(this.staged);
      else if (was === 'committed') await this.store.delete(this.key);
    } catch {
      // Best effort: a leftover staged file is swept with its directory after a restart.
    }
  }

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fh.close();
  }
}
