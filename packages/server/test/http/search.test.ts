import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '@parley/protocol';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  join,
  makeBot,
  makeUser,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { fileForm, freshDataDir, png, SAMPLES, upload } from '../helpers/media.js';
import { indexMessage } from '../../src/domain/search/search-index.js';
import { parseQuery, searchTokens } from '../../src/domain/search/search-text.js';
import { firstIdAt } from '../../src/ids/snowflake.js';

// D67 (issue 26): message search. ONE suite for both dialects (SQLite FTS5, PostgreSQL GIN):
// the same queries must give the same answers on each — words, phrases, exclusions, the prefix,
// CJK words of one and two characters, every filter, paging and totals, edits and deletes —
// and no hit may ever come from a channel the searcher cannot read.
dbDescribe('search (D67)', () => {
  let h: Harness;
  let w: World;
  const data = freshDataDir();
  let secret = 0; // @everyone denied VIEW_CHANNEL
  let noHistory = 0; // @everyone denied READ_MESSAGE_HISTORY
  let other = 0; // readable by everyone, second channel
  let outsider: { id: number; token: string };
  let stranger: World['bot']; // a bot in no guild
  let gagged: World['bot']; // a bot member whose role is denied `other`
  const readable = new Map<string, Set<number>>();

  const send = async (token: string, channelId: number, content: string, more = {}) =>
    (
      await expectStatus(
        await h.as(token).post(`/channels/${channelId}/messages`, { content, ...more }),
        200,
      )
    ).body as { id: number; channelId: number; content: string };

  /** A search as `token`; every hit is checked against what that caller may read. */
  const search = async (token: string, query: Record<string, string | number> = {}) => {
    const qs = new URLSearchParams(
      Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]),
    ).toString();
    const r = await expectStatus(
      await h.as(token).get(`/guilds/${w.guildId}/messages/search?${qs}`),
      200,
    );
    const allowed = readable.get(token);
    for (const m of r.body.messages) {
      expect(allowed?.has(m.channelId), `hit ${m.id} in channel ${m.channelId}`).toBe(true);
    }
    // newest first
    const ids = r.body.messages.map((m: { id: number }) => m.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    return r.body as {
      messages: { id: number; content: string; channelId: number; author: { id: number } }[];
      total: number;
      hasMore: boolean;
      totalCapped?: true;
    };
  };
  const contents = async (token: string, q: string, more: Record<string, string | number> = {}) =>
    (await search(token, { q, ...more })).messages.map((m) => m.content);

  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_DATA_DIR: data.dir, PARLEY_LINK_PREVIEWS: 'off' } });
    w = await makeWorld(h);
    outsider = await makeUser(h, 'outsider');
    stranger = await makeBot(h, w.owner.id, 'stranger');
    const mk = async (name: string) =>
      (await expectStatus(await h.admin.post(`/guilds/${w.guildId}/channels`, { name }), 201)).body
        .id as number;
    secret = await mk('secret');
    noHistory = await mk('no-history');
    other = await mk('other');
    const deny = async (channelId: number, roleId: number, bits: number) =>
      expectStatus(
        await h.admin.put(`/channels/${channelId}/overwrites/${roleId}`, { allow: 0, deny: bits }),
        200,
      );
    await deny(secret, w.guildId, Permission.VIEW_CHANNEL);
    await deny(noHistory, w.guildId, Permission.READ_MESSAGE_HISTORY);
    const role = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/roles`, { name: 'gag', permissions: 0 }),
      201,
    );
    gagged = await makeBot(h, w.owner.id, 'gagged');
    await join(h, w.guildId, gagged.userId, [role.body.id]);
    await deny(other, role.body.id, Permission.VIEW_CHANNEL);
    const all = new Set([w.channelId, secret, noHistory, other]);
    readable.set(w.owner.token, all);
    readable.set(w.human.token, new Set([w.channelId, other]));
    readable.set(w.bot.token, new Set([w.channelId, other]));
    readable.set(gagged.token, new Set([w.channelId]));

    // The owner writes the private words where only they can read them.
    await send(w.owner.token, secret, 'quick secretword hidden fox');
    await send(w.owner.token, noHistory, 'quick secretword unhistoric fox');
    await send(w.human.token, w.channelId, 'The quick brown fox jumps over the lazy dog');
    await send(w.human.token, w.channelId, 'a quick red fox');
    await send(w.bot.token, other, 'brown quick fox, not the phrase');
    await send(w.human.token, w.channelId, 'Visit https://Example.com/path today');
    await send(w.human.token, w.channelId, '東京タワーに行きました');
    await send(w.human.token, w.channelId, '京都は美しい');
    await send(w.human.token, w.channelId, '我爱北京天安门');
    await send(w.human.token, w.channelId, '서울에서 만나요');
    await send(w.human.token, w.channelId, 'Café naïve résumé');
  });
  afterAll(async () => {
    await h.close();
    data.remove();
  });

  it('the text both indexes see: ASCII punctuation is space, each CJK character a token', () => {
    expect(searchTokens('Hello, example.com! foo-bar_baz')).toEqual([
      'Hello',
      'example',
      'com',
      'foo',
      'bar',
      'baz',
    ]);
    expect(searchTokens('東京タワー 서울')).toEqual(['東', '京', 'タ', 'ワ', 'ー', '서', '울']);
    expect(searchTokens('𠮷野家')).toEqual(['𠮷', '野', '家']);
    expect(parseQuery('a "b c" -d -"e f" g')).toEqual({
      must: [
        { tokens: ['a'], prefix: false },
        { tokens: ['b', 'c'], prefix: false },
        { tokens: ['g'], prefix: true },
      ],
      not: [
        { tokens: ['d'], prefix: false },
        { tokens: ['e', 'f'], prefix: false },
      ],
    });
    // a finished last word (a space after it), a phrase or an exclusion last: no prefix
    expect(parseQuery('abc ').must[0]!.prefix).toBe(false);
    expect(parseQuery('"abc"').must[0]!.prefix).toBe(false);
    expect(parseQuery('abc -d').must[0]!.prefix).toBe(false);
    expect(parseQuery('!!! 🙂')).toEqual({ must: [], not: [] });
  });

  it('words: all must match, any case, any order; newest first', async () => {
    expect(await contents(w.human.token, 'fox quick')).toEqual([
      'brown quick fox, not the phrase',
      'a quick red fox',
      'The quick brown fox jumps over the lazy dog',
    ]);
    expect(await contents(w.human.token, 'QUICK LAZY')).toEqual([
      'The quick brown fox jumps over the lazy dog',
    ]);
    expect(await contents(w.human.token, 'quick elephant')).toEqual([]);
    // punctuation inside a word matches the same split on both dialects
    expect(await contents(w.human.token, 'example.com')).toEqual([
      'Visit https://Example.com/path today',
    ]);
    expect(await contents(w.human.token, 'example')).toHaveLength(1);
    // accents are kept: "cafe" is not "café"
    expect(await contents(w.human.token, 'café')).toEqual(['Café naïve résumé']);
    expect(await contents(w.human.token, 'cafe ')).toEqual([]);
    // only punctuation or emoji: nothing to look for, nothing found
    expect((await search(w.human.token, { q: '!!! 🙂' })).total).toBe(0);
  });

  it('the last word is a prefix; an earlier or finished one is not', async () => {
    expect(await contents(w.human.token, 'qui')).toHaveLength(3);
    expect(await contents(w.human.token, 'lazy d')).toHaveLength(1);
    expect(await contents(w.human.token, 'qui fox')).toEqual([]);
    expect(await contents(w.human.token, 'qui ')).toEqual([]);
    expect(await contents(w.human.token, 'jump')).toHaveLength(1);
  });

  it('"phrases" match adjacent words in order', async () => {
    expect(await contents(w.human.token, '"quick brown"')).toEqual([
      'The quick brown fox jumps over the lazy dog',
    ]);
    expect(await contents(w.human.token, '"brown quick" fox')).toEqual([
      'brown quick fox, not the phrase',
    ]);
    expect(await contents(w.human.token, '"quick fox"')).toEqual([
      'brown quick fox, not the phrase',
    ]);
    expect(await contents(w.human.token, '"fox quick"')).toEqual([]);
    // an unclosed quote runs to the end
    expect(await contents(w.human.token, '"red fox')).toEqual(['a quick red fox']);
  });

  it('-word and -"phrase" exclude; an exclusion alone searches everything else', async () => {
    expect(await contents(w.human.token, 'quick fox -lazy')).toEqual([
      'brown quick fox, not the phrase',
      'a quick red fox',
    ]);
    expect(await contents(w.human.token, 'fox -"quick brown"')).toEqual([
      'brown quick fox, not the phrase',
      'a quick red fox',
    ]);
    const rest = await contents(w.human.token, '-fox');
    expect(rest).toContain('京都は美しい');
    expect(rest.some((c) => c.includes('fox'))).toBe(false);
  });

  it('CJK: words of one and two characters are found, matched as phrases', async () => {
    expect(await contents(w.human.token, '東')).toEqual(['東京タワーに行きました']);
    expect(await contents(w.human.token, '京')).toEqual([
      '我爱北京天安门',
      '京都は美しい',
      '東京タワーに行きました',
    ]);
    expect(await contents(w.human.token, '東京')).toEqual(['東京タワーに行きました']);
    expect(await contents(w.human.token, '京都')).toEqual(['京都は美しい']);
    expect(await contents(w.human.token, '北京')).toEqual(['我爱北京天安门']);
    expect(await contents(w.human.token, '京東')).toEqual([]);
    expect(await contents(w.human.token, 'タワー')).toEqual(['東京タワーに行きました']);
    expect(await contents(w.human.token, '서울')).toEqual(['서울에서 만나요']);
    expect(await contents(w.human.token, '"天安门"')).toEqual(['我爱北京天安门']);
    expect(await contents(w.human.token, '京 -東')).toEqual(['我爱北京天安门', '京都は美しい']);
  });

  it('no hit ever comes from a channel the searcher cannot read (VIEW_CHANNEL, READ_MESSAGE_HISTORY)', async () => {
    // the owner reads every channel: both private messages exist and are found
    expect(await contents(w.owner.token, 'secretword')).toHaveLength(2);
    // a member denied VIEW_CHANNEL on one and READ_MESSAGE_HISTORY on the other finds neither
    expect(await search(w.human.token, { q: 'secretword' })).toEqual({
      messages: [],
      total: 0,
      hasMore: false,
    });
    expect((await search(w.human.token, { q: 'secretword', channelId: secret })).total).toBe(0);
    expect((await search(w.human.token, { q: 'secretword', channelId: noHistory })).total).toBe(0);
    // totals count only readable hits too (4 "quick fox" messages exist, 3 readable)
    expect((await search(w.human.token, { q: 'quick fox' })).total).toBe(3);
    expect((await search(w.owner.token, { q: 'quick fox' })).total).toBe(5);
    expect((await search(w.human.token, { q: '-nothinglikethis' })).total).toBe(9);
    // a bot reads as its roles allow
    expect(await contents(w.bot.token, 'secretword')).toEqual([]);
    expect(await contents(gagged.token, 'phrase')).toEqual([]);
    expect(await contents(gagged.token, 'quick fox')).toHaveLength(2);
    // not a member: 403; no such guild: 404
    expectError(
      await h.as(stranger.token).get(`/guilds/${w.guildId}/messages/search?q=quick`),
      403,
      'FORBIDDEN',
    );
    expectError(
      await h.as(outsider.token).get(`/guilds/${w.guildId}/messages/search?q=quick`),
      403,
      'FORBIDDEN',
    );
    expectError(
      await h.as(w.human.token).get(`/guilds/123456789/messages/search?q=quick`),
      404,
      'NOT_FOUND',
    );
    expectError(
      await h.as(undefined).get(`/guilds/${w.guildId}/messages/search`),
      401,
      'UNAUTHORIZED',
    );
  });

  it('filters: authorId, channelId, mentions, has, pinned, before, after', async () => {
    const c = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/channels`, { name: 'filters' }),
      201,
    );
    const ch = c.body.id as number;
    for (const t of [w.owner.token, w.human.token, w.bot.token]) readable.get(t)!.add(ch);
    readable.get(gagged.token)!.add(ch);
    const up = async (name: string, bytes: Buffer) =>
      (await expectStatus(await upload(h, w.human.token, fileForm(name, bytes)), 200)).body.url;
    const m1 = await send(w.human.token, ch, 'zebra one');
    const m2 = await send(w.bot.token, ch, `zebra two <@${w.human.id}>`);
    const m3 = await send(w.human.token, ch, 'zebra three http://zebra.example');
    const m4 = await send(w.bot.token, ch, 'zebra four', { embeds: [{ title: 'stripes' }] });
    const m5 = await send(w.human.token, ch, 'zebra five', {
      attachments: [await up('z.png', png())],
    });
    const m6 = await send(w.human.token, ch, 'zebra six', {
      attachments: [await up('z.mp3', SAMPLES.mp3.bytes())],
    });
    await expectStatus(await h.as(w.owner.token).put(`/channels/${ch}/pins/${m3.id}`), 204);
    const ids = async (q: Record<string, string | number>) =>
      (await search(w.human.token, { q: 'zebra', ...q })).messages.map((m) => m.id);
    expect(await ids({})).toEqual([m6.id, m5.id, m4.id, m3.id, m2.id, m1.id]);
    expect(await ids({ authorId: w.bot.userId })).toEqual([m4.id, m2.id]);
    expect(await ids({ channelId: ch })).toHaveLength(6);
    expect(await ids({ channelId: w.channelId })).toEqual([]);
    expect(await ids({ mentions: w.human.id })).toEqual([m2.id]);
    expect(await ids({ mentions: w.owner.id })).toEqual([]);
    expect(await ids({ has: 'link' })).toEqual([m3.id]);
    expect(await ids({ has: 'embed' })).toEqual([m4.id]);
    expect(await ids({ has: 'file' })).toEqual([m6.id, m5.id]);
    expect(await ids({ has: 'image' })).toEqual([m5.id]);
    expect(await ids({ has: 'audio' })).toEqual([m6.id]);
    expect(await ids({ has: 'video' })).toEqual([]);
    expect(await ids({ pinned: 'true' })).toEqual([m3.id]);
    expect(await ids({ pinned: 'false' })).toHaveLength(5);
    expect(await ids({ before: m3.id })).toEqual([m2.id, m1.id]);
    expect(await ids({ after: m4.id })).toEqual([m6.id, m5.id]);
    expect(await ids({ after: m1.id, before: m4.id })).toEqual([m3.id, m2.id]);
    // a date as an id: nothing before 2026 exists
    expect(await ids({ before: firstIdAt(Date.UTC(2026, 0, 1)) })).toEqual([]);
    // filters alone, without words
    const mine = await search(w.human.token, { channelId: ch, authorId: w.human.id });
    expect(mine.messages.map((m) => m.id)).toEqual([m6.id, m5.id, m3.id, m1.id]);
    // the hits are whole messages, as the channel's history shows them
    const hist = (await h.as(w.human.token).get(`/channels/${ch}/messages?limit=100`)).body;
    const found = await search(w.human.token, { channelId: ch });
    expect(found.messages).toEqual(hist.messages);
  });

  it('paging: limit and offset, total, hasMore', async () => {
    const ch = other;
    const sent: number[] = [];
    for (let i = 0; i < 30; i++) sent.push((await send(w.human.token, ch, `pageword ${i}`)).id);
    const newest = [...sent].reverse();
    const page = (offset: number, limit: number) =>
      search(w.human.token, { q: 'pageword', offset, limit });
    const p0 = await page(0, 25);
    expect(p0.total).toBe(30);
    expect(p0.hasMore).toBe(true);
    expect(p0.totalCapped).toBeUndefined();
    expect(p0.messages.map((m) => m.id)).toEqual(newest.slice(0, 25));
    const p1 = await page(25, 25);
    expect(p1).toMatchObject({ total: 30, hasMore: false });
    expect(p1.messages.map((m) => m.id)).toEqual(newest.slice(25));
    const p2 = await page(10, 10);
    expect(p2.messages.map((m) => m.id)).toEqual(newest.slice(10, 20));
    expect(p2.hasMore).toBe(true);
    expect(await page(40, 5)).toEqual({ messages: [], total: 30, hasMore: false });
    expect((await search(w.human.token, { q: 'pageword' })).messages).toHaveLength(25);
    for (const bad of ['limit=0', 'limit=26', 'offset=-1', 'offset=976', 'has=gif', 'pinned=yes'])
      expectError(
        await h.as(w.human.token).get(`/guilds/${w.guildId}/messages/search?${bad}`),
        400,
        'VALIDATION_ERROR',
        bad,
      );
    expectError(
      await h.as(w.human.token).get(`/guilds/${w.guildId}/messages/search?q=${'x'.repeat(513)}`),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('total is exact up to 1,000, then 1000 with totalCapped', async () => {
    const ch = (
      await expectStatus(await h.admin.post(`/guilds/${w.guildId}/channels`, { name: 'bulk' }), 201)
    ).body.id as number;
    for (const t of [w.owner.token, w.human.token, w.bot.token]) readable.get(t)!.add(ch);
    // 1,005 messages written through the storage layer (the send's own index write), quickly
    const d = h.services.domain;
    const ids: number[] = [];
    await d.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 1005; i++) {
        const id = d.ids.next();
        ids.push(id);
        await trx
          .insertInto('messages')
          .values({
            id,
            channel_id: ch,
            guild_id: w.guildId,
            author_id: w.human.id,
            content: `capword ${i}`,
            created_at: d.clock.now(),
            edited_at: null,
            msg_type: 0,
          })
          .execute();
        await indexMessage(trx, id, `capword ${i}`);
      }
    });
    const r = await search(w.human.token, { q: 'capword', offset: 975, limit: 25 });
    expect(r.total).toBe(1000);
    expect(r.totalCapped).toBe(true);
    expect(r.hasMore).toBe(false);
    expect(r.messages.map((m) => m.id)).toEqual([...ids].reverse().slice(975, 1000));
    const first = await search(w.human.token, { q: 'capword' });
    expect(first).toMatchObject({ total: 1000, totalCapped: true, hasMore: true });
    // 1,000 exactly is not capped
    const exact = await search(w.human.token, { q: 'capword', after: ids[4]! });
    expect(exact.total).toBe(1000);
    expect(exact.totalCapped).toBeUndefined();
    const fewer = await search(w.human.token, { q: 'capword', after: ids[5]! });
    expect(fewer.total).toBe(999);
  });

  it('an edit is re-indexed; deleted messages are gone (one, a channel, a user)', async () => {
    const m = await send(w.human.token, w.channelId, 'alphaword before the edit');
    expect(await contents(w.human.token, 'alphaword')).toHaveLength(1);
    await expectStatus(
      await h.as(w.human.token).put(`/channels/${w.channelId}/messages/${m.id}`, {
        content: 'betaword after the edit',
      }),
      200,
    );
    expect(await contents(w.human.token, 'alphaword')).toEqual([]);
    expect(await contents(w.human.token, 'betaword')).toEqual(['betaword after the edit']);
    await expectStatus(
      await h.as(w.human.token).delete(`/channels/${w.channelId}/messages/${m.id}`),
      204,
    );
    expect(await contents(w.human.token, 'betaword')).toEqual([]);

    // a whole channel's messages
    const gone = (
      await expectStatus(await h.admin.post(`/guilds/${w.guildId}/channels`, { name: 'gone' }), 201)
    ).body.id as number;
    readable.get(w.owner.token)!.add(gone);
    await send(w.owner.token, gone, 'gammaword one');
    await send(w.owner.token, gone, 'gammaword two');
    expect(await contents(w.owner.token, 'gammaword')).toHaveLength(2);
    await expectStatus(await h.as(w.owner.token).delete(`/channels/${gone}`), 204);
    expect(await contents(w.owner.token, 'gammaword')).toEqual([]);

    // a deleted person's messages (the operator's purge)
    const leaver = await makeUser(h, 'leaver');
    await join(h, w.guildId, leaver.id);
    readable.set(leaver.token, new Set([w.channelId, other]));
    await send(leaver.token, w.channelId, 'deltaword from someone leaving');
    expect(await contents(w.human.token, 'deltaword')).toHaveLength(1);
    await expectStatus(await h.admin.delete(`/users/${leaver.id}`), 204);
    expect(await contents(w.human.token, 'deltaword')).toEqual([]);
    // nothing was left in the index either (SQLite: its row went with the message)
    if (h.services.domain.dialect === 'sqlite') {
      const left = await h.services.domain.db
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const { sql } = await import('kysely');
      const fts = await sql<{ n: number }>`select count(*) as n from messages_fts`.execute(
        h.services.domain.db,
      );
      expect(Number(fts.rows[0]!.n)).toBe(Number(left.n));
    }
  });

  it('sends and edits that share a group commit are all indexed, each with its latest text', async () => {
    // 40 at once: on SQLite they share group commits, whose index rows are written in one batch
    // at the group's end (search-index.ts); an edit racing its own send's group keeps the edit.
    const sent = await Promise.all(
      Array.from({ length: 40 }, (_, i) => send(w.human.token, w.channelId, `zeta${i}word first`)),
    );
    await Promise.all(
      sent.slice(0, 20).map((m, i) =>
        h.as(w.human.token).put(`/channels/${w.channelId}/messages/${m.id}`, {
          content: `zeta${i}word second`,
        }),
      ),
    );
    for (let i = 0; i < 40; i++)
      expect(await contents(w.human.token, `zeta${i}word`)).toEqual([
        `zeta${i}word ${i < 20 ? 'second' : 'first'}`,
      ]);
    expect(await contents(w.human.token, 'first zeta')).toHaveLength(20);
  });

  it('a DM: its two parties search it; anyone else is refused', async () => {
    const open = await expectStatus(await h.as(w.bot.token).post(`/users/${w.human.id}/dm`), 200);
    const dm = open.body.channelId as number;
    await expectStatus(
      await h.as(w.human.token).post(`/dm/channels/${dm}/messages`, { content: 'psstword 東京' }),
      200,
    );
    for (const t of [w.human.token, w.bot.token]) {
      const r = await expectStatus(
        await h.as(t).get(`/dm/channels/${dm}/messages/search?q=${encodeURIComponent('東')}`),
        200,
      );
      expect(r.body.messages.map((m: { content: string }) => m.content)).toEqual(['psstword 東京']);
      expect(r.body.total).toBe(1);
    }
    // not in a guild search, and not for a third person
    expect(await contents(w.human.token, 'psstword')).toEqual([]);
    expectError(
      await h.as(w.owner.token).get(`/dm/channels/${dm}/messages/search?q=psstword`),
      403,
      'FORBIDDEN',
    );
    expectError(
      await h.as(w.owner.token).get(`/dm/channels/${w.channelId}/messages/search?q=x`),
      404,
      'NOT_FOUND',
    );
  });
});

describe('search text (D67)', () => {
  it('keeps text without punctuation or CJK as it is', () => {
    expect(searchTokens('plain words')).toEqual(['plain', 'words']);
  });
});
