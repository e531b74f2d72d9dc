import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectStatus,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { PeopleEvents } from '../helpers/guild-admin.js';
import { freshDataDir, png } from '../helpers/media.js';
import { readBotLog, ZERO_KEY } from '../../src/events/log.js';
import { linksOf, readMeta } from '../../src/previews/metadata.js';
import { PREVIEW_USER_AGENT } from '../../src/previews/fetch-page.js';

const END = { xid: Number.MAX_SAFE_INTEGER, pos: Number.MAX_SAFE_INTEGER };

/** A local site: an OpenGraph page, its image, a redirect, a page without metadata. */
async function startSite(): Promise<{
  origin: string;
  hits: string[];
  agents: string[];
  cookies: number;
  close(): Promise<void>;
}> {
  const hits: string[] = [];
  const agents: string[] = [];
  let cookies = 0;
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    agents.push(String(req.headers['user-agent']));
    if (req.headers.cookie) cookies++;
    if (req.url === '/article') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.setHeader('set-cookie', 'track=1');
      res.end(
        '<!doctype html><html><head><title>Plain title</title>' +
          '<meta property="og:title" content="An &amp; article">' +
          '<meta property="og:description" content="<script>alert(1)</script> Said well.">' +
          '<meta property="og:site_name" content="Local News">' +
          '<meta property="og:image" content="/img.png"></head><body>x</body></html>',
      );
    } else if (req.url === '/img.png') {
      res.setHeader('content-type', 'text/html'); // lies: the bytes are sniffed (D23)
      res.end(png());
    } else if (req.url === '/moved') {
      res.statusCode = 302;
      res.setHeader('location', '/article');
      res.end();
    } else if (req.url === '/bare') {
      res.setHeader('content-type', 'text/html');
      res.end('<html><body>nothing</body></html>');
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    hits,
    agents,
    get cookies() {
      return cookies;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

// D71 (issue 24): link previews fetched by the server behind D37's guard, cached a day, images
// through the CDN's proxy; MESSAGE_UPDATE without editedTimestamp to people, MESSAGE_EMBEDS_UPDATE
// only to subscribed bots.
dbDescribe('link previews (D71)', () => {
  let h: Harness;
  let w: World;
  let site: Awaited<ReturnType<typeof startSite>>;
  let people: PeopleEvents;
  const data = freshDataDir();
  const ch = () => `/channels/${w.channelId}/messages`;
  const settle = () => h.services.domain.previews?.idle();

  beforeAll(async () => {
    site = await startSite();
    h = await createHarness({
      env: { PARLEY_DATA_DIR: data.dir, PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    w = await makeWorld(h);
    people = new PeopleEvents(h);
  });
  afterAll(async () => {
    people.stop();
    await h.close();
    await site.close();
    data.remove();
  });

  it("a person's link gets a preview: MESSAGE_UPDATE without editedTimestamp, image through the proxy", async () => {
    await expectStatus(
      await h.as(w.bot.token).patch('/bot/me', { events: ['MESSAGE_EMBEDS_UPDATE'] }),
      200,
    );
    const sent = await expectStatus(
      await h.as(w.human.token).post(ch(), { content: `look ${site.origin}/article !` }),
      200,
    );
    expect(sent.body).not.toHaveProperty('embeds'); // previews come after the answer
    await settle();
    const got = (await h.as(w.human.token).get(`${ch()}?limit=1`)).body.messages[0];
    expect(got.id).toBe(sent.body.id);
    expect(got).not.toHaveProperty('editedTimestamp');
    expect(got.embeds).toHaveLength(1);
    const e = got.embeds[0];
    expect(e).toMatchObject({
      type: 'link',
      url: `${site.origin}/article`,
      title: 'An & article',
      description: '<script>alert(1)</script> Said well.', // plain text: clients never render it as HTML
      siteName: 'Local News',
    });
    expect(e.image.url).toMatch(/^http:\/\/parley\.test\/cdn\/proxy\/\d+$/);
    expect(e.image.width).toBeGreaterThan(0);
    const img = await h.request({ method: 'GET', url: new URL(e.image.url).pathname });
    expect(img.status).toBe(200);
    expect(img.headers['content-type']).toBe('image/png');
    expect(img.headers['x-content-type-options']).toBe('nosniff');
    // people: one MESSAGE_UPDATE for the channel, not an edit (revises D35 for this case)
    const updates = people.of('MESSAGE_UPDATE').filter((u) => u.data.id === sent.body.id);
    expect(updates).toHaveLength(1);
    expect(updates[0]?.data).not.toHaveProperty('editedTimestamp');
    expect(updates[0]?.data.embeds).toEqual(got.embeds);
    // the subscribed bot: MESSAGE_EMBEDS_UPDATE, never a MESSAGE_UPDATE for this
    const rows = await readBotLog(h.services.domain.db, w.bot.id, ZERO_KEY, END, 1000);
    const mine = rows.filter((r) => JSON.parse(r.data).id === sent.body.id);
    expect(mine.map((r) => r.type)).toEqual(['MESSAGE_CREATE', 'MESSAGE_EMBEDS_UPDATE']);
    expect(JSON.parse(mine[1]?.data ?? '{}')).toEqual({
      id: sent.body.id,
      channelId: w.channelId,
      guildId: w.guildId,
      embeds: got.embeds,
    });
    // fetched with our User-Agent, no cookie sent back
    expect(site.agents.every((a) => a === PREVIEW_USER_AGENT)).toBe(true);
    expect(site.cookies).toBe(0);
  });

  it('each URL is fetched once a day; the image once', async () => {
    const before = site.hits.length;
    await expectStatus(
      await h.as(w.owner.token).post(ch(), { content: `${site.origin}/article` }),
      200,
    );
    await settle();
    expect(site.hits.length).toBe(before);
    const got = (await h.as(w.owner.token).get(`${ch()}?limit=1`)).body.messages[0];
    expect(got.embeds[0].title).toBe('An & article');
  });

  it('redirects are followed (and re-checked); pages without metadata and suppressed links get none', async () => {
    const moved = await expectStatus(
      await h.as(w.human.token).post(ch(), { content: `${site.origin}/moved` }),
      200,
    );
    const bare = await expectStatus(
      await h.as(w.human.token).post(ch(), { content: `${site.origin}/bare` }),
      200,
    );
    await settle();
    expect(site.hits.slice(-3).sort()).toEqual(['/article', '/bare', '/moved']);
    const hits = site.hits.length;
    const angle = await expectStatus(
      await h.as(w.human.token).post(ch(), { content: `<${site.origin}/other1>` }),
      200,
    );
    const flag = await expectStatus(
      await h
        .as(w.human.token)
        .post(ch(), { content: `${site.origin}/other2`, suppressEmbeds: true }),
      200,
    );
    await settle();
    expect(site.hits.slice(hits)).toEqual([]);
    const page = (await h.as(w.human.token).get(`${ch()}?limit=4`)).body.messages;
    const byId = new Map(page.map((m: { id: number }) => [m.id, m]));
    expect((byId.get(moved.body.id) as { embeds: unknown[] }).embeds).toHaveLength(1);
    for (const id of [bare.body.id, angle.body.id, flag.body.id])
      expect(byId.get(id)).not.toHaveProperty('embeds');
  });

  it("bots' messages get no previews (their embeds are their own)", async () => {
    const hits = site.hits.length;
    await expectStatus(await h.as(w.bot.token).post(ch(), { content: `${site.origin}/x1` }), 200);
    await settle();
    expect(site.hits.length).toBe(hits);
  });
});

dbDescribe('link previews behind the guard (D71, D37)', () => {
  let h: Harness;
  let w: World;
  let site: Awaited<ReturnType<typeof startSite>>;

  beforeAll(async () => {
    site = await startSite();
    h = await createHarness(); // private targets not allowed
    w = await makeWorld(h);
  });
  afterAll(async () => {
    await h.close();
    await site.close();
  });

  it('a link to a private address is never fetched', async () => {
    for (const content of [
      `${site.origin}/article`,
      `http://localhost:${new URL(site.origin).port}/article`,
    ])
      await expectStatus(
        await h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content }),
        200,
      );
    await h.services.domain.previews?.idle();
    expect(site.hits).toEqual([]);
    const page = await h.as(w.human.token).get(`/channels/${w.channelId}/messages?limit=2`);
    for (const m of page.body.messages) expect(m).not.toHaveProperty('embeds');
  });
});

dbDescribe('PARLEY_LINK_PREVIEWS=off (D71)', () => {
  it('fetches nothing', async () => {
    const site = await startSite();
    const h = await createHarness({
      env: { PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true', PARLEY_LINK_PREVIEWS: 'off' },
    });
    try {
      const w = await makeWorld(h);
      await expectStatus(
        await h.as(w.human.token).post(`/channels/${w.channelId}/messages`, {
          content: `${site.origin}/article`,
        }),
        200,
      );
      await h.services.domain.previews?.idle();
      expect(site.hits).toEqual([]);
    } finally {
      await h.close();
      await site.close();
    }
  });
});

describe('D71 metadata and links (unit)', () => {
  it('reads OpenGraph first, then Twitter cards, then HTML', async () => {
    expect(
      await readMeta(
        '<head><title> T </title><meta name="twitter:title" content="TW">' +
          '<meta name="description" content="D"></head><body><meta property="og:title" content="late"></body>',
      ),
    ).toEqual({ title: 'TW', description: 'D' });
  });
  it('finds autolinks and masked links, not suppressed ones or code, at most 5', () => {
    expect(
      linksOf(
        'a https://a.example/x. [t](https://b.example/y) <https://c.example> `https://d.example` http://e.example/(x',
        5,
      ),
    ).toEqual(['https://a.example/x', 'https://b.example/y', 'http://e.example/']);
    const many = Array.from({ length: 8 }, (_, i) => `https://s${i}.example`).join(' ');
    expect(linksOf(many, 5)).toHaveLength(5);
  });
});
