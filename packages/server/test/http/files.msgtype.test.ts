import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { fileForm, freshDataDir, SAMPLES, upload } from '../helpers/media.js';

// Issue 4: D15 — msgType 1 image, 2 audio, 3 video: content must be the URL of an uploaded
// file of that kind; anything else → 400 VALIDATION_ERROR. msgType is never echoed.
dbDescribe('messages carrying uploaded files (D15)', () => {
  let h: Harness;
  let w: World;
  const data = freshDataDir();
  const urls: Record<string, string> = {};
  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_DATA_DIR: data.dir } });
    w = await makeWorld(h);
    for (const [ext, sample] of Object.entries(SAMPLES)) {
      const r = await upload(h, w.human.token, fileForm(`f.${ext}`, sample.bytes()));
      if (r.status !== 200) throw new Error(r.raw);
      urls[ext] = r.body.url;
    }
  });
  afterAll(async () => {
    await h.close();
    data.remove();
  });

  const send = (content: string, msgType: number) =>
    h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, { content, msgType });

  it('accepts the URL of a file of the right kind (any uploader), guild and DM', async () => {
    const kinds: [string, number][] = [
      ['png', 1],
      ['gif', 1],
      ['jpg', 1],
      ['mp3', 2],
      ['wav', 2],
      ['mp4', 3],
    ];
    for (const [ext, msgType] of kinds) {
      const r = await send(urls[ext] ?? '', msgType);
      expect(r.status, `${ext}: ${r.raw}`).toBe(200);
      expect(r.body.content).toBe(urls[ext]);
      expect(r.body.msgType).toBeUndefined();
    }
    const dm = await h.as(w.bot.token).post(`/users/${w.human.id}/dm`);
    const r = await h
      .as(w.bot.token)
      .post(`/dm/channels/${dm.body.channelId}/messages`, { content: urls['mp4'], msgType: 3 });
    expect(r.status).toBe(200);
  });

  it('refuses the wrong kind, other URLs and altered URLs with 400 VALIDATION_ERROR', async () => {
    const png = urls['png'] ?? '';
    const id = /\/files\/(\d+)\//.exec(png)?.[1] ?? '';
    const refused: [string, number][] = [
      [png, 2],
      [png, 3],
      [urls['mp3'] ?? '', 1],
      [urls['mp4'] ?? '', 2],
      ['https://example.com/cat.png', 1],
      ['http://parley.test/cdn/avatars/default.png', 1],
      [png.replace('f.png', 'g.png'), 1],
      [png.replace(`/${id}/`, `/${Number(id) + 1}/`), 1],
      [png.replace(`/${id}/`, `/0${id}/`), 1],
      [`${png}?x=1`, 1],
      [`${png}/`, 1],
      [png.replace('http://', 'https://'), 1],
      [` ${png}`, 1],
      ['hello', 1],
    ];
    for (const [content, msgType] of refused) {
      const r = await send(content, msgType);
      expect(r.status, `${content} as ${msgType}`).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
    for (const msgType of [4, -1, 1.5]) expect((await send(png, msgType)).status).toBe(400);
  });

  it('leaves msgType 0 (text) alone, URL or not', async () => {
    expect((await send(urls['png'] ?? '', 0)).status).toBe(200);
    expect((await send('https://example.com/x.png', 0)).status).toBe(200);
  });
});
