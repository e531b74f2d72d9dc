import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectStatus,
  join,
  makeWorld,
  type Caller,
  type Harness,
  type World,
} from '../helpers/harness.js';

// Acceptance 4 (issue 2): message pagination (D16) and member pagination (D20), hasMore exact at
// every boundary. Expected pages come from a reference model of D16 over the ids we sent.

const N = 300;
const MAX = Number.MAX_SAFE_INTEGER;

interface Q {
  before?: number;
  after?: number;
  limit?: number;
}

/** D16, written out: the page and hasMore that a query must give over `asc` (ids ascending). */
function model(asc: readonly number[], q: Q): { ids: number[]; hasMore: boolean } {
  const limit = q.limit ?? 50;
  const inRange = asc.filter(
    (id) => (q.before === undefined || id < q.before) && (q.after === undefined || id > q.after),
  );
  if (q.after !== undefined && q.before === undefined) {
    // after alone: the `limit` oldest past the cursor, listed newest first; more = newer ones.
    const page = inRange.slice(0, limit);
    return { ids: [...page].reverse(), hasMore: inRange.length > limit };
  }
  // none / before / both: the newest `limit` in range; more = older ones inside the range.
  const page = inRange.slice(-limit).reverse();
  return { ids: page, hasMore: inRange.length > limit };
}

const qs = (q: Q): string => {
  const parts = Object.entries(q)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${String(v)}`);
  return parts.length ? `?${parts.join('&')}` : '';
};

dbDescribe('message pagination (D16)', () => {
  let h: Harness;
  let w: World;
  let bot: Caller;
  /** ids of the channel's messages, oldest first */
  let ids: number[];
  let page: (q: Q) => Promise<{ ids: number[]; hasMore: boolean }>;

  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
    bot = h.as(w.bot.token);
    ids = [];
    const other = await h.admin.post(`/guilds/${w.guildId}/channels`, { name: 'other' });
    for (let i = 0; i < N; i++) {
      const r = await expectStatus(
        await bot.post(`/channels/${w.channelId}/messages`, { content: `m${i}` }),
        200,
      );
      ids.push(r.body.id);
      // Noise in another channel, interleaved: it must never show up in this channel's pages.
      if (i % 50 === 0)
        await expectStatus(
          await bot.post(`/channels/${other.body.id}/messages`, { content: 'noise' }),
          200,
        );
    }
    page = async (q) => {
      const r = await bot.get(`/channels/${w.channelId}/messages${qs(q)}`);
      if (r.status !== 200) throw new Error(`${qs(q)} → ${r.status} ${r.raw}`);
      expect(Object.keys(r.body).sort()).toEqual(['hasMore', 'messages']);
      return { ids: r.body.messages.map((m: { id: number }) => m.id), hasMore: r.body.hasMore };
    };
  }, 120_000);
  afterAll(async () => h.close());

  const newest = (n: number): number[] => ids.slice(-n).reverse();
  const at = (i: number): number => {
    const id = ids[i];
    if (id === undefined) throw new Error(`no message ${i}`);
    return id;
  };

  it('D3: ids increase in creation order, so newest first = id descending', () => {
    for (let i = 1; i < ids.length; i++) expect(at(i)).toBeGreaterThan(at(i - 1));
  });

  it('default: the newest 50, newest first, hasMore true', async () => {
    const r = await bot.get(`/channels/${w.channelId}/messages`);
    expect(r.body.messages).toHaveLength(50);
    expect(r.body.messages.map((m: { id: number }) => m.id)).toEqual(newest(50));
    expect(r.body.messages[0].content).toBe(`m${N - 1}`);
    expect(r.body.hasMore).toBe(true);
  });

  it('limit 1, 50 and 100 give the newest 1, 50, 100 with hasMore true', async () => {
    for (const limit of [1, 50, 100]) {
      expect(await page({ limit })).toEqual({ ids: newest(limit), hasMore: true });
    }
  });

  it('walking back with before: exactly-full pages, the last one hasMore false (limit 100: 3 pages)', async () => {
    const seen: number[] = [];
    let cursor: number | undefined;
    const flags: boolean[] = [];
    for (;;) {
      const p = await page({ limit: 100, ...(cursor === undefined ? {} : { before: cursor }) });
      seen.push(...p.ids);
      flags.push(p.hasMore);
      if (!p.hasMore) break;
      cursor = p.ids[p.ids.length - 1];
    }
    // 300 = 3 × 100: the third page is exactly full and still says there is nothing more.
    expect(flags).toEqual([true, true, false]);
    expect(seen).toEqual([...ids].reverse());
  });

  it('walking back with before and limit 50, and with limit 7 (a partial last page)', async () => {
    for (const limit of [50, 7]) {
      const seen: number[] = [];
      let cursor = MAX;
      let pages = 0;
      for (;;) {
        const p = await page({ before: cursor, limit });
        pages++;
        expect(p.ids.length).toBe(Math.min(limit, N - seen.length));
        seen.push(...p.ids);
        expect(p.hasMore).toBe(seen.length < N);
        if (!p.hasMore) break;
        cursor = p.ids[p.ids.length - 1] ?? 0;
      }
      expect(pages).toBe(Math.ceil(N / limit));
      expect(seen).toEqual([...ids].reverse());
    }
  });

  it('walking forward with after=0: oldest pages first, each newest first, the last hasMore false', async () => {
    const seen: number[] = [];
    let cursor = 0;
    const flags: boolean[] = [];
    for (;;) {
      const p = await page({ after: cursor, limit: 100 });
      // Within a page: newest first (D16), even when paging towards newer messages.
      expect(p.ids).toEqual([...p.ids].sort((a, b) => b - a));
      seen.unshift(...p.ids);
      flags.push(p.hasMore);
      if (!p.hasMore) break;
      cursor = p.ids[0] ?? 0;
    }
    expect(flags).toEqual([true, true, false]);
    expect(seen).toEqual([...ids].reverse());
  });

  it('after=0 reads from the very first message (D16: a cursor is a position)', async () => {
    expect(await page({ after: 0, limit: 1 })).toEqual({ ids: [at(0)], hasMore: true });
    expect(await page({ after: 0, limit: 3 })).toEqual({
      ids: [at(2), at(1), at(0)],
      hasMore: true,
    });
  });

  it('before=0 and before the oldest are empty with hasMore false', async () => {
    expect(await page({ before: 0 })).toEqual({ ids: [], hasMore: false });
    expect(await page({ before: at(0) })).toEqual({ ids: [], hasMore: false });
    expect(await page({ before: at(1) })).toEqual({ ids: [at(0)], hasMore: false });
    expect(await page({ before: at(2), limit: 1 })).toEqual({ ids: [at(1)], hasMore: true });
    expect(await page({ before: at(2), limit: 2 })).toEqual({
      ids: [at(1), at(0)],
      hasMore: false,
    });
  });

  it('a cursor beyond the newest: before gives the newest page, after gives nothing', async () => {
    const beyond = at(N - 1) + 1_000_000;
    expect(await page({ before: beyond })).toEqual({ ids: newest(50), hasMore: true });
    expect(await page({ before: MAX, limit: 100 })).toEqual({ ids: newest(100), hasMore: true });
    expect(await page({ after: beyond })).toEqual({ ids: [], hasMore: false });
    expect(await page({ after: MAX })).toEqual({ ids: [], hasMore: false });
    expect(await page({ after: at(N - 1) })).toEqual({ ids: [], hasMore: false });
  });

  it('after near the newest: hasMore exact at the boundary', async () => {
    expect(await page({ after: at(N - 2) })).toEqual({ ids: [at(N - 1)], hasMore: false });
    // exactly the last 100 after the cursor: a full page with nothing newer
    expect(await page({ after: at(N - 101), limit: 100 })).toEqual({
      ids: newest(100),
      hasMore: false,
    });
    // one more message past the cursor than the page holds
    const p = await page({ after: at(N - 102), limit: 100 });
    expect(p.ids).toEqual(ids.slice(N - 101, N - 1).reverse());
    expect(p.hasMore).toBe(true);
  });

  it('before and after together: the range after < id < before, newest first', async () => {
    // 10 messages strictly inside (at(9), at(20))
    const inside = ids.slice(10, 20).reverse();
    expect(await page({ after: at(9), before: at(20) })).toEqual({ ids: inside, hasMore: false });
    expect(await page({ after: at(9), before: at(20), limit: 10 })).toEqual({
      ids: inside,
      hasMore: false,
    });
    expect(await page({ after: at(9), before: at(20), limit: 9 })).toEqual({
      ids: inside.slice(0, 9),
      hasMore: true,
    });
    expect(await page({ after: at(9), before: at(20), limit: 1 })).toEqual({
      ids: [at(19)],
      hasMore: true,
    });
    expect(await page({ after: 0, before: MAX, limit: 100 })).toEqual({
      ids: newest(100),
      hasMore: true,
    });
  });

  it('after ≥ before is empty with hasMore false', async () => {
    for (const [after, before] of [
      [at(5), at(5)],
      [at(10), at(5)],
      [at(5), at(6)], // adjacent: nothing strictly between
      [MAX, 0],
      [0, 0],
    ] as const) {
      expect(await page({ after, before })).toEqual({ ids: [], hasMore: false });
    }
  });

  it('agrees with the D16 model over a grid of cursors, limits and directions', async () => {
    const cursors = [
      0,
      at(0) - 1,
      at(0),
      at(1),
      at(49),
      at(50),
      at(99),
      at(100),
      at(149),
      at(199),
      at(200),
      at(250),
      at(298),
      at(N - 1),
      at(N - 1) + 1,
      MAX,
    ];
    const limits = [1, 2, 50, 99, 100, undefined];
    for (const limit of limits) {
      for (const c of cursors) {
        for (const q of [{ before: c }, { after: c }] as Q[]) {
          const want = model(ids, { ...q, ...(limit === undefined ? {} : { limit }) });
          expect(await page({ ...q, ...(limit === undefined ? {} : { limit }) }), qs(q)).toEqual(
            want,
          );
        }
      }
    }
    const pairs = [0, at(0), at(49), at(50), at(150), at(N - 1), MAX];
    for (const limit of [1, 50, 100]) {
      for (const after of pairs) {
        for (const before of pairs) {
          const q = { after, before, limit };
          expect(await page(q), qs(q)).toEqual(model(ids, q));
        }
      }
    }
  }, 60_000);

  it('edits and deletes keep the order; a deleted message leaves the pages without a gap', async () => {
    const victim = at(N - 2);
    expect((await bot.delete(`/channels/${w.channelId}/messages/${victim}`)).status).toBe(204);
    expect(
      (await bot.put(`/channels/${w.channelId}/messages/${at(N - 3)}`, { content: 'e' })).status,
    ).toBe(200);
    const p = await page({ limit: 3 });
    expect(p).toEqual({ ids: [at(N - 1), at(N - 3), at(N - 4)], hasMore: true });
    // before the deleted id still works: it is only a position
    expect(await page({ before: victim, limit: 1 })).toEqual({ ids: [at(N - 3)], hasMore: true });
    ids.splice(N - 2, 1);
  });

  it('DM lists page exactly like channel lists (D17)', async () => {
    const open = await expectStatus(await bot.post(`/users/${w.human.id}/dm`), 200);
    const ch = open.body.channelId as number;
    const dmIds: number[] = [];
    for (let i = 0; i < 7; i++) {
      const author = i % 2 === 0 ? bot : h.as(w.human.token);
      const r = await expectStatus(
        await author.post(`/dm/channels/${ch}/messages`, { content: `d${i}` }),
        200,
      );
      dmIds.push(r.body.id);
    }
    const get = async (q: Q) => {
      const r = await expectStatus(await bot.get(`/dm/channels/${ch}/messages${qs(q)}`), 200);
      return { ids: r.body.messages.map((m: { id: number }) => m.id), hasMore: r.body.hasMore };
    };
    for (const q of [
      {},
      { limit: 7 },
      { limit: 6 },
      { limit: 1 },
      { after: 0, limit: 3 },
      { after: dmIds[3] ?? 0, limit: 3 },
      { after: dmIds[2] ?? 0, limit: 3 },
      { before: dmIds[3] ?? 0, limit: 3 },
      { before: dmIds[3] ?? 0, limit: 2 },
      { after: dmIds[1] ?? 0, before: dmIds[5] ?? 0, limit: 3 },
      { after: dmIds[1] ?? 0, before: dmIds[5] ?? 0, limit: 2 },
    ] as Q[]) {
      expect(await get(q), qs(q)).toEqual(model(dmIds, q));
    }
  });
});

dbDescribe('member pagination (D20)', () => {
  let h: Harness;
  let w: World;
  let bot: Caller;
  /** member user ids, ascending */
  let memberIds: number[];
  let outsider = 0;
  const EXTRA = 110; // with the world's owner, human and bot: 113 members, more than the default 100

  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
    bot = h.as(w.bot.token);
    const created: number[] = [];
    for (let i = 0; i < EXTRA; i++) {
      const u = await expectStatus(await h.admin.post('/users', { name: `u${i}` }), 201);
      created.push(u.body.id);
      // A user that never joins, with an id between members: a cursor need not name a member.
      if (i === 50)
        outsider = (await expectStatus(await h.admin.post('/users', { name: 'out' }), 201)).body.id;
    }
    // Join in reverse creation order: sorted by user id must not be join order.
    for (const id of [...created].reverse()) await join(h, w.guildId, id);
    memberIds = [w.owner.id, w.human.id, w.bot.userId, ...created].sort((a, b) => a - b);
  }, 120_000);
  afterAll(async () => h.close());

  const list = async (query: string) => {
    const r = await expectStatus(await bot.get(`/guilds/${w.guildId}/members${query}`), 200);
    return {
      ids: r.body.members.map((m: { user: { id: number } }) => m.user.id) as number[],
      hasMore: r.body.hasMore as boolean,
    };
  };

  it('default: the first 100 by user id ascending, hasMore true', async () => {
    expect(memberIds.length).toBe(EXTRA + 3);
    expect(await list('')).toEqual({ ids: memberIds.slice(0, 100), hasMore: true });
  });

  it('limit 1000 returns everyone with hasMore false; limit 1 returns the lowest id', async () => {
    expect(await list('?limit=1000')).toEqual({ ids: memberIds, hasMore: false });
    expect(await list('?limit=1')).toEqual({ ids: memberIds.slice(0, 1), hasMore: true });
  });

  it('hasMore is exact at the boundary: limit = count → false, count − 1 → true', async () => {
    const n = memberIds.length;
    expect(await list(`?limit=${n}`)).toEqual({ ids: memberIds, hasMore: false });
    expect(await list(`?limit=${n - 1}`)).toEqual({
      ids: memberIds.slice(0, n - 1),
      hasMore: true,
    });
  });

  it('after walks the list: pages concatenate to all members, the last hasMore false', async () => {
    for (const limit of [7, 113, 50]) {
      const seen: number[] = [];
      let after = 0;
      for (;;) {
        const p = await list(`?after=${after}&limit=${limit}`);
        seen.push(...p.ids);
        expect(p.hasMore).toBe(seen.length < memberIds.length);
        if (!p.hasMore) break;
        after = p.ids[p.ids.length - 1] ?? 0;
      }
      expect(seen).toEqual(memberIds);
    }
  });

  it('after is a position: the last member → empty; a non-member id between members works', async () => {
    const last = memberIds[memberIds.length - 1] ?? 0;
    expect(await list(`?after=${last}`)).toEqual({ ids: [], hasMore: false });
    expect(await list(`?after=${Number.MAX_SAFE_INTEGER}`)).toEqual({ ids: [], hasMore: false });
    const next = memberIds.findIndex((id) => id > outsider);
    expect(next).toBeGreaterThan(0);
    expect(await list(`?after=${outsider}&limit=2`)).toEqual({
      ids: memberIds.slice(next, next + 2),
      hasMore: true,
    });
    expect(await list(`?after=${memberIds[memberIds.length - 2] ?? 0}&limit=1`)).toEqual({
      ids: [last],
      hasMore: false,
    });
  });

  it('a member who leaves disappears from the list; members of other guilds never appear', async () => {
    const other = await expectStatus(
      await h.admin.post('/guilds', { name: 'Other', ownerId: w.human.id }),
      201,
    );
    const stranger = await expectStatus(await h.admin.post('/users', { name: 'stranger' }), 201);
    await join(h, other.body.id, stranger.body.id);
    const leaving = memberIds[5] ?? 0;
    expect((await h.admin.delete(`/guilds/${w.guildId}/members/${leaving}`)).status).toBe(204);
    const all = await list('?limit=1000');
    expect(all.ids).toEqual(memberIds.filter((id) => id !== leaving));
    expect(all.ids).not.toContain(stranger.body.id);
  });
});
