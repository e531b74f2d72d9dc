import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DerivedCache } from '../../src/domain/derived-cache.js';
import { migrate, openDatabase, sql, type DatabaseHandle } from '../../src/storage/db.js';
import { SESSION_TOUCH_SQL } from '../../src/storage/derived-writes.js';
import { rawQuery } from '../../src/storage/raw-sql.js';

// The SQLite version token behind domain/derived-cache.ts: it must move for every write that
// could change cached auth/access/recipient data — by this connection, by another process on
// the same file (the CLI), and when a transaction rolls back — and stay put for the
// high-volume writes of a message send, or caching would never hit.
describe('DerivedCache over SQLite (storage/db.ts version)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-cache-'));
  const url = `sqlite:${path.join(dir, 'parley.db')}`;
  let a: DatabaseHandle;
  let b: DatabaseHandle; // a second connection: another process on the same file

  beforeAll(async () => {
    a = openDatabase(url);
    await migrate(a.db, 'sqlite');
    b = openDatabase(url);
    await a.db
      .insertInto('users')
      .values({
        id: 1,
        name: 'ann',
        avatar: null,
        is_bot: 0,
        password_hash: null,
        bot_count: 0,
        created_at: 0,
      })
      .execute();
  });

  afterAll(async () => {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const version = (h: DatabaseHandle): number => {
    const v = h.version.read();
    if (typeof v !== 'number') throw new Error('SQLite answers its version at once');
    return v;
  };
  const nameOf = async (h: DatabaseHandle) =>
    (await h.db.selectFrom('users').select('name').where('id', '=', 1).executeTakeFirst())?.name;

  it('a commit by another connection is seen from the next turn of the event loop', async () => {
    const cache = new DerivedCache(a.version);
    let loads = 0;
    const get = () => cache.get('user:1', async () => (loads++, nameOf(a)));
    expect(await get()).toBe('ann');
    expect(await get()).toBe('ann');
    expect(loads).toBe(1); // served from memory while nothing changed
    await b.db.updateTable('users').set({ name: 'bea' }).where('id', '=', 1).execute();
    // The next request arrives in a later turn (network I/O): by then the commit is seen.
    await new Promise((r) => setImmediate(r));
    expect(await get()).toBe('bea');
    expect(loads).toBe(2);
  });

  it('a write by this connection moves the version before it runs', async () => {
    const v0 = version(a);
    await a.db.updateTable('users').set({ name: 'cid' }).where('id', '=', 1).execute();
    expect(version(a)).not.toBe(v0);
  });

  it('a rolled-back transaction moves it too: nothing read inside it is served later', async () => {
    const cache = new DerivedCache(a.version);
    await expect(
      a.db.transaction().execute(async (trx) => {
        await trx.updateTable('users').set({ name: 'ghost' }).where('id', '=', 1).execute();
        // Cached inside the transaction, under the version its own write produced …
        const inside = await cache.get('user:1', async () => nameOf({ ...a, db: trx }));
        expect(inside).toBe('ghost');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // … and not served after the rollback.
    expect(await cache.get('user:1', () => nameOf(a))).toBe('cid');
  });

  it('a value loaded while the version moved is returned but not kept', async () => {
    const cache = new DerivedCache(a.version);
    const first = await cache.get('user:1', async () => {
      const n = await nameOf(a);
      await a.db.updateTable('users').set({ name: 'dan' }).where('id', '=', 1).execute();
      return n;
    });
    expect(first).toBe('cid');
    expect(await cache.get('user:1', () => nameOf(a))).toBe('dan');
  });

  it('message, outbox and quota writes leave it alone (the send path keeps its cache)', async () => {
    const v0 = version(a);
    await a.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('messages')
        .values({
          id: 10,
          channel_id: 1,
          guild_id: null,
          author_id: 1,
          content: 'x',
          msg_type: 0,
          created_at: 0,
          edited_at: null,
        })
        .execute()
        .catch(() => undefined); // foreign keys may refuse it; the version must not move anyway
      await trx
        .insertInto('event_log')
        .values({ pos: 11, xid: 0, type: 'T', data: '{}', recipients: 1, created_at: 0 })
        .execute();
      await trx.insertInto('gateway_claims').values({ bot_id: 1, n: 1 }).execute();
      await sql`select 1`.execute(trx);
    });
    expect(version(a)).toBe(v0);
  });

  it("D47: a session's last-use touch leaves it alone; ending a session moves it", async () => {
    await a.db
      .insertInto('user_sessions')
      .values({
        token_hash: 'h1',
        user_id: 1,
        created_at: 0,
        id: 's1',
        last_used_at: 0,
        user_agent: '',
      })
      .execute();
    const v0 = version(a);
    await rawQuery(a.db, SESSION_TOUCH_SQL, [60_000, 'h1', 60_000]);
    expect(version(a)).toBe(v0);
    const row = await a.db
      .selectFrom('user_sessions')
      .select('last_used_at')
      .where('token_hash', '=', 'h1')
      .executeTakeFirstOrThrow();
    expect(row.last_used_at).toBe(60_000);
    // Any other write to sessions (here: ending it) drops cached session rows.
    await a.db.deleteFrom('user_sessions').where('token_hash', '=', 'h1').execute();
    expect(version(a)).not.toBe(v0);
  });

  it('cached values are frozen: a caller cannot change what the next one gets', async () => {
    const cache = new DerivedCache(a.version);
    const v = await cache.get('list', async () => ({ ids: [1, 2] }));
    expect(() => v.ids.push(3)).toThrow(TypeError);
  });

  it('a value in memory comes back as it is, not as a promise (issue 29: no garbage per hit)', async () => {
    const cache = new DerivedCache(a.version);
    const first = cache.get('k', async () => 'v');
    expect(first).toBeInstanceOf(Promise); // loaded: the load is asynchronous
    expect(await first).toBe('v');
    expect(cache.get('k', async () => 'other')).toBe('v');
    // a pinned version equal to the cache's is a hit too; another one goes the long way
    const pin = version(a);
    expect(cache.get('k', async () => 'other', pin)).toBe('v');
    await b.db.updateTable('users').set({ name: 'cid' }).where('id', '=', 1).execute();
    await new Promise((r) => setImmediate(r));
    const moved = cache.get('k', async () => 'new');
    expect(moved).toBeInstanceOf(Promise);
    expect(await moved).toBe('new');
  });

  it('without a version nothing is kept', async () => {
    const cache = new DerivedCache(null);
    let loads = 0;
    await cache.get('k', async () => ++loads);
    await cache.get('k', async () => ++loads);
    expect(loads).toBe(2);
  });
});

// The rules PostgreSQL's version (storage/pg-version.ts) relies on, with a version under the
// test's control: an asynchronous read, NaN when it cannot tell, and a local writer open.
describe('DerivedCache over an asynchronous version (PostgreSQL rules)', () => {
  const fake = () => {
    const v = { at: 1, writers: 0 };
    const version = {
      read: async () => v.at,
      storable: () => v.writers === 0,
    };
    return { v, cache: new DerivedCache(version) };
  };

  it('serves from memory while the version stands, and loads again once it moves', async () => {
    const { v, cache } = fake();
    let loads = 0;
    const get = () => cache.get('k', async () => ++loads);
    expect(await get()).toBe(1);
    expect(await get()).toBe(1);
    v.at = 2; // another node committed a change
    expect(await get()).toBe(2);
    expect(loads).toBe(2);
  });

  it('while a local transaction has written and not ended, lookups load and nothing is kept', async () => {
    const { v, cache } = fake();
    let value = 'committed';
    expect(await cache.get('k', async () => value)).toBe('committed');
    // The transaction changed the row; the version moves only after its commit. Its own lookup
    // (recipients read after adding a member) must see its write, not the cached value.
    v.writers = 1;
    value = 'uncommitted';
    expect(await cache.get('k', async () => value)).toBe('uncommitted');
    // It rolls back: the version moves (pg-version bumps on rollback too), the writer is gone.
    value = 'committed';
    v.writers = 0;
    v.at = 2;
    expect(await cache.get('k', async () => value)).toBe('committed');
  });

  it('a pinned version serves several lookups from one read; an older pin never rolls the cache back', async () => {
    const { v, cache } = fake();
    let reads = 0;
    const counted = new DerivedCache({
      read: async () => (reads++, v.at),
      storable: () => true,
    });
    const pin = await counted.now();
    expect(await counted.get('a', async () => 'A', pin)).toBe('A');
    expect(await counted.get('b', async () => 'B', pin)).toBe('B');
    expect(reads).toBe(1); // unpinned, each lookup would have read once more (and after a load)
    // Another lookup read a newer version since the pin was taken: the old pin loads, keeps nothing.
    v.at = 2;
    expect(await counted.get('a', async () => 'A2')).toBe('A2');
    expect(await counted.get('a', async () => 'stale', pin)).toBe('stale');
    expect(await counted.get('a', async () => 'never')).toBe('A2');
    void cache;
  });

  it('an unpinned lookup over an asynchronous version is always a promise (the read comes first)', async () => {
    const { cache } = fake();
    expect(await cache.get('k', async () => 'v')).toBe('v');
    const again = cache.get('k', async () => 'other');
    expect(again).toBeInstanceOf(Promise);
    expect(await again).toBe('v');
    // pinned at the cache's version: known at once, so a hit
    const pin = await cache.now();
    expect(cache.get('k', async () => 'other', pin)).toBe('v');
  });

  it('NaN (the version cannot be told) keeps nothing', async () => {
    const { v, cache } = fake();
    v.at = NaN;
    let loads = 0;
    await cache.get('k', async () => ++loads);
    await cache.get('k', async () => ++loads);
    expect(loads).toBe(2);
  });
});
