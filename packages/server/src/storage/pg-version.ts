import type { Client, Pool, PoolClient } from 'pg';
import { writesDerivedData } from './derived-writes.js';

/** Created by migration 0012; per schema, like every table. */
const SEQUENCE = 'parley_cache_version';
const BUMP_SQL = `select nextval('${SEQUENCE}')`;
const READ_SQL = `select last_value from ${SEQUENCE}`;
/** the sequence does not exist yet (a database before migration 0012: migrations themselves) */
const UNDEFINED_TABLE = '42P01';
const ENDS_TRANSACTION = /^\s*(?:commit|rollback|end|abort)\s*;?\s*$/i;
const BEGINS_TRANSACTION = /^\s*(?:begin|start\s+transaction)\b/i;

type TxState = 'none' | 'open' | 'wrote';

/**
 * Issue 15: the derived cache (domain/derived-cache.ts) made exact on PostgreSQL, where several
 * nodes write to one database. The version is a sequence shared by every node:
 *
 * - **Bumped after every commit that wrote derived data** (derived-writes.ts decides), on the
 *   same connection, before the COMMIT's caller goes on — so before the request that made the
 *   change is answered. A statement outside a transaction bumps after it runs; a rolled-back
 *   transaction bumps too (a value loaded inside it may have seen its writes). The bump comes
 *   after the commit, never before: a reader that saw the new version must also see the data.
 * - **Read once per cache lookup**, with concurrent lookups sharing a read — but only a read sent
 *   after the lookup began: a read already under way may predate a commit whose answer the caller
 *   has seen (it kicked a member, then sends as them), so such a lookup waits for the next one.
 *   One indexed statement per lookup instead of the three to five the cached value would cost.
 * - **Nothing is kept while a transaction of this node has written derived data and not ended**:
 *   a value loaded then may include its uncommitted writes.
 *
 * When it cannot tell (the sequence is missing, a bump or a read failed) `read` gives NaN: the
 * cache then loads every value and keeps none, until the next bump succeeds.
 */
export class PgCacheVersion {
  private newClient: (() => Client) | undefined;
  private reader: Promise<Client> | undefined;
  private closed = false;
  private openWriters = 0;
  private failed = false;
  private inFlight: Promise<number> | undefined;
  private queued: Promise<number> | undefined;
  /** bumps made by this node (tests, metrics) */
  bumps = 0;
  /** reads sent to the database (tests, metrics) */
  sent = 0;

  /**
   * The pool whose connections are watched, and how to open the reading connection (pg is
   * loaded lazily, so both come later).
   */
  attach(pool: Pool, newClient: () => Client): void {
    this.newClient = newClient;
    pool.on('connect', (client) => this.watch(client));
  }

  async close(): Promise<void> {
    this.closed = true;
    const reader = this.reader;
    this.reader = undefined;
    await reader?.then((c) => c.end()).catch(() => {});
  }

  /** The shared version; NaN when it cannot be told now. */
  read(): Promise<number> {
    // Issue 29: sent at the end of this turn of the loop, not at once, so that every request
    // that arrived in it shares the read (on PostgreSQL each read is a round trip and a socket
    // write); a read sent later still began after each of them.
    // Behind a read under way, the next is sent as soon as it is back (as before).
    this.queued ??= this.inFlight
      ? this.inFlight.then(
          () => this.send(),
          () => this.send(),
        )
      : new Promise<number>((resolve) => setImmediate(() => resolve(this.send())));
    return this.queued;
  }

  /** False while a value loaded now might include a transaction's uncommitted writes. */
  storable(): boolean {
    return this.openWriters === 0;
  }

  private connection(): Promise<Client> | undefined {
    if (this.reader || this.closed || !this.newClient) return this.reader;
    const client = this.newClient();
    const lost = (): void => {
      if (this.reader === opened) this.reader = undefined;
    };
    client.on('error', lost);
    client.on('end', lost);
    const opened = client.connect().then(() => client);
    opened.catch(lost);
    this.reader = opened;
    return opened;
  }

  private send(): Promise<number> {
    this.queued = undefined;
    this.sent++;
    const connection = this.connection();
    if (!connection) return Promise.resolve(NaN);
    const p: Promise<number> = connection
      .then((c) => c.query<{ last_value: number }>(READ_SQL))
      .then(
        (r) => (this.failed ? NaN : Number(r.rows[0]?.last_value ?? NaN)),
        () => NaN,
      );
    this.inFlight = p;
    void p.finally(() => {
      if (this.inFlight === p) this.inFlight = undefined;
    });
    return p;
  }

  private watch(client: PoolClient): void {
    let tx: TxState = 'none';
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    const bump = async (): Promise<void> => {
      try {
        await (query(BUMP_SQL) as Promise<unknown>);
        this.bumps++;
        this.failed = false;
      } catch (err) {
        // Before migration 0012 nothing can be cached (reads give NaN too); otherwise the
        // version could not move: stop serving cached values until a bump succeeds.
        if ((err as { code?: string }).code !== UNDEFINED_TABLE) this.failed = true;
      }
    };
    const ended = async (): Promise<void> => {
      const wrote = tx === 'wrote';
      tx = 'none';
      if (!wrote) return;
      await bump();
      this.openWriters--;
    };
    // A connection lost inside a writing transaction: PostgreSQL rolls it back.
    client.on('end', () => {
      if (tx !== 'wrote') return;
      tx = 'none';
      this.openWriters--;
      this.failed = true; // no connection to bump on: the next successful bump clears this
    });
    (client as { query: unknown }).query = (...args: unknown[]): unknown => {
      const first = args[0];
      const text =
        typeof first === 'string'
          ? first
          : typeof (first as { text?: unknown } | null)?.text === 'string'
            ? (first as { text: string }).text
            : undefined;
      const result = query(...args);
      // Callback-style calls and submittables (cursors) pass as they are. Kysely makes neither
      // kind of write; should one ever come, it cannot be followed to its commit, so the cache
      // stops serving until the next bump.
      if (text === undefined || !(result instanceof Promise)) {
        if (text !== undefined && writesDerivedData(text)) this.failed = true;
        return result;
      }
      if (BEGINS_TRANSACTION.test(text)) {
        tx = 'open';
        return result;
      }
      if (ENDS_TRANSACTION.test(text)) return result.finally(ended);
      if (!writesDerivedData(text)) return result;
      if (tx === 'open') {
        tx = 'wrote';
        this.openWriters++;
        return result;
      }
      if (tx === 'wrote') return result;
      // Outside a transaction: the statement commits by itself.
      return result.finally(bump);
    };
  }
}
