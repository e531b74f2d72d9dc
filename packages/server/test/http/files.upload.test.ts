import { existsSync, utimesSync } from 'node:fs';
import { Readable } from 'node:stream';
import { sweepOrphanBlobs } from '../../src/domain/files/files.service.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import {
  blobFiles,
  cdn,
  fileForm,
  freshDataDir,
  multipart,
  png,
  pngOfSize,
  SAMPLES,
  stagedFiles,
  streamingForm,
  upload,
} from '../helpers/media.js';

// Issue 4, acceptance 1 and 2: uploads of the six formats, the CDN (D22, D23), limits and
// refusals (D6), file names.
const MiB = 1024 * 1024;
const keys = (o: object): string[] => Object.keys(o).sort();

dbDescribe('file upload and CDN', () => {
  let h: Harness;
  let w: World;
  const data = freshDataDir();
  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_DATA_DIR: data.dir } });
    w = await makeWorld(h);
  });
  afterAll(async () => {
    await h.close();
    data.remove();
  });

  it('uploads each of the six formats and serves them back byte-identical with the D23 headers', async () => {
    for (const [ext, sample] of Object.entries(SAMPLES)) {
      const bytes = sample.bytes();
      const r = await upload(h, w.bot.token, fileForm(`sample.${ext}`, bytes));
      expect(r.status, `${ext}: ${r.raw}`).toBe(200);
      // D22: exactly {url, filename, size}; the URL is absolute under {cdn_url} (D1).
      expect(keys(r.body)).toEqual(['filename', 'size', 'url']);
      expect(r.body.filename).toBe(`sample.${ext}`);
      expect(r.body.size).toBe(bytes.length);
      expect(r.body.url).toMatch(
        new RegExp(`^http://parley\\.test/cdn/files/[1-9][0-9]*/sample\\.${ext}$`),
      );

      const got = await cdn(h, r.body.url);
      expect(got.statusCode).toBe(200);
      expect(Buffer.compare(got.rawPayload, bytes)).toBe(0);
      expect(got.headers['content-type']).toBe(sample.mime);
      expect(got.headers['content-length']).toBe(String(bytes.length));
      expect(got.headers['x-content-type-options']).toBe('nosniff');
      expect(got.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
      expect(got.headers['content-disposition']).toBe(
        `inline; filename="sample.${ext}"; filename*=UTF-8''sample.${ext}`,
      );
      expect(got.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(got.headers['etag']).toMatch(/^"[^"]+"$/);
      expect(got.headers['accept-ranges']).toBe('bytes');
      // D26: the CDN is not rate limited (no bucket headers).
      expect(got.headers['x-ratelimit-limit']).toBeUndefined();

      // D23: byte ranges (audio/video seek).
      const part = await cdn(h, r.body.url, { range: 'bytes=0-9' });
      expect(part.statusCode).toBe(206);
      expect(part.rawPayload.length).toBe(10);
      expect(Buffer.compare(part.rawPayload, bytes.subarray(0, 10))).toBe(0);
      expect(part.headers['content-range']).toBe(`bytes 0-9/${bytes.length}`);
      expect(part.headers['content-length']).toBe('10');
      expect(part.headers['content-type']).toBe(sample.mime);

      const head = await cdn(h, r.body.url, {}, 'HEAD');
      expect(head.statusCode).toBe(200);
      expect(head.headers['content-length']).toBe(String(bytes.length));
      expect(head.headers['content-type']).toBe(sample.mime);
      expect(head.rawPayload.length).toBe(0);
    }
  });

  it('answers suffix, open and clamped ranges, 416 past the end, the full body for multi-range', async () => {
    const bytes = pngOfSize(1000);
    const r = await upload(h, w.bot.token, fileForm('r.png', bytes));
    const ranged = async (range: string) => cdn(h, r.body.url, { range });

    const suffix = await ranged('bytes=-5');
    expect(suffix.statusCode).toBe(206);
    expect(suffix.headers['content-range']).toBe('bytes 995-999/1000');
    expect(Buffer.compare(suffix.rawPayload, bytes.subarray(995))).toBe(0);

    const open = await ranged('bytes=990-');
    expect(open.statusCode).toBe(206);
    expect(open.rawPayload.length).toBe(10);

    const clamped = await ranged('bytes=998-5000');
    expect(clamped.statusCode).toBe(206);
    expect(clamped.headers['content-range']).toBe('bytes 998-999/1000');

    const past = await ranged('bytes=1000-1010');
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe('bytes */1000');
    expect(JSON.parse(past.body).error.code).toBe('RANGE_NOT_SATISFIABLE');

    // Documented choice: several ranges at once get the whole body (RFC 9110 allows ignoring).
    const multi = await ranged('bytes=0-1,5-6');
    expect(multi.statusCode).toBe(200);
    expect(multi.rawPayload.length).toBe(1000);

    const garbage = await ranged('bytes=abc');
    expect(garbage.statusCode).toBe(200);

    const headRange = await cdn(h, r.body.url, { range: 'bytes=0-9' }, 'HEAD');
    expect(headRange.statusCode).toBe(206);
    expect(headRange.headers['content-length']).toBe('10');
    expect(headRange.rawPayload.length).toBe(0);
  });

  it('answers conditional requests: If-None-Match → 304, a stale If-Range → the full body', async () => {
    const r = await upload(h, w.bot.token, fileForm('c.png', png()));
    const etag = (await cdn(h, r.body.url)).headers['etag'] as string;
    const cached = await cdn(h, r.body.url, { 'if-none-match': etag });
    expect(cached.statusCode).toBe(304);
    expect(cached.rawPayload.length).toBe(0);
    const stale = await cdn(h, r.body.url, { range: 'bytes=0-9', 'if-range': '"other"' });
    expect(stale.statusCode).toBe(200);
    const fresh = await cdn(h, r.body.url, { range: 'bytes=0-9', 'if-range': etag });
    expect(fresh.statusCode).toBe(206);
  });

  it('answers 404 in the D5 form for an unknown id, a wrong name or a malformed id', async () => {
    const r = await upload(h, w.bot.token, fileForm('real.png', png()));
    const id = /\/files\/(\d+)\//.exec(r.body.url)?.[1];
    for (const url of [
      `http://parley.test/cdn/files/${Number(id) + 1}/real.png`,
      `http://parley.test/cdn/files/${id}/other.png`,
      `http://parley.test/cdn/files/${id}/REAL.png`,
      `http://parley.test/cdn/files/0${id}/real.png`,
      `http://parley.test/cdn/files/abc/real.png`,
      `http://parley.test/cdn/files/99999999999999999999/real.png`,
    ]) {
      const got = await cdn(h, url);
      expect(got.statusCode, url).toBe(404);
      expect(JSON.parse(got.body)).toEqual({
        error: { code: 'NOT_FOUND', message: expect.any(String) },
      });
      expect(got.headers['cache-control']).toBeUndefined();
    }
  });

  it('accepts 5 MiB exactly; 5 MiB + 1 → 413 and nothing is stored', async () => {
    const before = blobFiles(data.dir).length;
    const exact = await upload(h, w.bot.token, fileForm('big.png', pngOfSize(5 * MiB)));
    expect(exact.status, exact.raw).toBe(200);
    expect(exact.body.size).toBe(5 * MiB);
    const back = await cdn(h, exact.body.url, { range: `bytes=${5 * MiB - 4}-` });
    expect(back.rawPayload.length).toBe(4);

    const quota = (await h.as(w.bot.token).get('/files/quota')).body;
    const over = await upload(h, w.bot.token, fileForm('big.png', pngOfSize(5 * MiB + 1)));
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    // D24: nothing stored, nothing charged.
    expect(blobFiles(data.dir).length).toBe(before + 1);
    expect(stagedFiles(data.dir)).toEqual([]);
    expect((await h.as(w.bot.token).get('/files/quota')).body).toEqual(quota);
  });

  it('stops reading an oversized upload at the limit (a 64 MiB stream is not read to its end)', async () => {
    const form = streamingForm('huge.png', 64 * MiB);
    const r = await h.app.inject({
      method: 'POST',
      url: '/api/v1/files/upload',
      headers: {
        authorization: `Bearer ${w.bot.token}`,
        'content-type': form.contentType,
        'transfer-encoding': 'chunked',
      },
      payload: form.stream,
    });
    expect(r.statusCode).toBe(413);
    // The rest is never read: the answer closes the connection.
    expect(r.headers['connection']).toBe('close');
    // Read: the limit plus what was already in flight (a few stream buffers), not 64 MiB.
    expect(form.pulled()).toBeGreaterThan(5 * MiB);
    expect(form.pulled()).toBeLessThan(5 * MiB + 1 * MiB);
    expect(stagedFiles(data.dir)).toEqual([]);
  });

  it('stops reading a chunked body whose ignored text fields grow past the limit', async () => {
    const boundary = 'fieldflood';
    let pulled = 0;
    function* flood(): Generator<Buffer> {
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\n`,
      );
      pulled += head.length;
      yield head;
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      for (let i = 0; i < 1024; i++) {
        pulled += chunk.length;
        yield chunk; // 64 MiB of one text field, never a file
      }
    }
    const r = await h.app.inject({
      method: 'POST',
      url: '/api/v1/files/upload',
      headers: {
        authorization: `Bearer ${w.bot.token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
      },
      payload: Readable.from(flood(), { objectMode: false }),
    });
    expect(r.statusCode).toBe(413);
    expect(JSON.parse(r.body).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(r.headers['connection']).toBe('close');
    expect(pulled).toBeLessThan(5 * MiB + 1 * MiB);
  });

  it('refuses a request whose Content-Length is over the limit before reading it', async () => {
    const r = await upload(h, w.bot.token, fileForm('big.png', pngOfSize(6 * MiB)));
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('types files by content and the name must agree: 415 otherwise (D22)', async () => {
    const before = blobFiles(data.dir).length;
    const html = Buffer.from('<!doctype html><html><script>alert(1)</script></html>');
    const cases: [string, Buffer][] = [
      ['x.png', html], // HTML dressed as an image
      ['x.mp3', png()], // a PNG named as audio
      ['x.jpg', png()],
      ['x', png()], // no extension
      ['x.png.txt', png()],
      ['x.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')],
      ['x.webp', Buffer.from('RIFF\x1a\x00\x00\x00WEBPVP8 ', 'latin1')],
      ['x.png', Buffer.alloc(0)], // empty
    ];
    for (const [name, bytes] of cases) {
      const r = await upload(h, w.bot.token, fileForm(name, bytes));
      expect(r.status, `${name}: ${r.raw}`).toBe(415);
      expect(r.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
    // jpeg is the other spelling of jpg; extensions are case-insensitive.
    expect((await upload(h, w.bot.token, fileForm('x.jpeg', SAMPLES.jpg.bytes()))).status).toBe(
      200,
    );
    const upper = await upload(h, w.bot.token, fileForm('LOUD.PNG', png()));
    expect(upper.status).toBe(200);
    expect(upper.body.filename).toBe('LOUD.png');
    expect(blobFiles(data.dir).length).toBe(before + 2);
    expect(stagedFiles(data.dir)).toEqual([]);
  });

  it('takes only multipart/form-data on the upload route (415), and no other route takes multipart', async () => {
    const auth = { authorization: `Bearer ${w.bot.token}` };
    for (const type of [
      'application/json',
      'text/plain',
      'image/png',
      'multipart/mixed; boundary=x',
    ]) {
      const r = await h.request({
        method: 'POST',
        url: '/api/v1/files/upload',
        headers: { ...auth, 'content-type': type },
        payload: type === 'application/json' ? '{"file":"x"}' : 'abc',
      });
      expect(r.status, type).toBe(415);
      expect(r.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
    const none = await h.request({ method: 'POST', url: '/api/v1/files/upload', headers: auth });
    expect(none.status).toBe(415);
    const form = fileForm('x.png', png());
    const elsewhere = await h.request({
      method: 'POST',
      url: `/api/v1/channels/${w.channelId}/messages`,
      headers: { ...auth, 'content-type': form.contentType },
      payload: form.body,
    });
    expect(elsewhere.status).toBe(415);
  });

  it('needs exactly one file in field "file": none, two or another field → 400; text fields are ignored', async () => {
    const before = blobFiles(data.dir).length;
    const bad = [
      multipart([{ name: 'note', data: 'hello' }]),
      multipart([]),
      multipart([
        { name: 'file', filename: 'a.png', data: png() },
        { name: 'file', filename: 'b.png', data: png() },
      ]),
      multipart([
        { name: 'file', filename: 'a.png', data: png() },
        { name: 'other', filename: 'b.png', data: png() },
      ]),
      multipart([{ name: 'upload', filename: 'a.png', data: png() }]),
      // A part named "file" without a filename is a text field: still no file.
      multipart([{ name: 'file', data: png().toString('latin1') }]),
    ];
    for (const form of bad) {
      const r = await upload(h, w.bot.token, form);
      expect(r.status, r.raw).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
    const malformed = await upload(h, w.bot.token, {
      contentType: 'multipart/form-data; boundary=abc',
      body: Buffer.from(
        '--abc\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nxx',
      ),
    });
    expect(malformed.status).toBe(400);
    const noBoundary = await upload(h, w.bot.token, {
      contentType: 'multipart/form-data',
      body: fileForm('a.png', png()).body,
    });
    expect(noBoundary.status).toBe(400);
    expect(blobFiles(data.dir).length).toBe(before);
    expect(stagedFiles(data.dir)).toEqual([]);

    const withFields = await upload(
      h,
      w.bot.token,
      multipart([
        { name: 'caption', data: 'a cat' },
        { name: 'file', filename: 'cat.png', data: png() },
        { name: 'tags', data: 'x'.repeat(10_000) },
      ]),
    );
    expect(withFields.status, withFields.raw).toBe(200);
  });

  it('neutralises path tricks, control characters and very long names (D22)', async () => {
    const cases: [string, string][] = [
      ['../../etc/passwd.png', 'passwd.png'],
      ['..\\..\\windows\\win.png', 'win.png'],
      ['/abs/path/x.png', 'x.png'],
      ['a\u0000b\u0001c\u001f.png', 'abc.png'],
      ['x\u202egnp.png', 'xgnp.png'], // a bidi override that would disguise the extension
      ['.hidden.png', 'hidden.png'],
      ['..png', 'file.png'],
      ["my cat's; photo (1).png", 'my_cat_s_photo_1.png'],
      ['100%.png', '100.png'],
      ['café ☕.png', 'café.png'],
      ['猫の写真.gif.png', '猫の写真.gif.png'],
    ];
    for (const [raw, safe] of cases) {
      const r = await upload(h, w.bot.token, fileForm(raw, png()));
      expect(r.status, `${JSON.stringify(raw)}: ${r.raw}`).toBe(200);
      expect(r.body.filename).toBe(safe);
      expect(r.body.url).toBe(r.body.url.replace(/[^/]+$/, '') + encodeURIComponent(safe));
      const got = await cdn(h, r.body.url);
      expect(got.statusCode).toBe(200);
      expect(got.headers['content-disposition']).toBe(
        `inline; filename="${safe.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(safe)}`,
      );
    }
    const long = await upload(h, w.bot.token, fileForm(`${'n'.repeat(5000)}.png`, png()));
    expect(long.status).toBe(200);
    expect(long.body.filename).toBe(`${'n'.repeat(100)}.png`);
    // Storage keys are random: no client-given name reaches the disk.
    for (const f of blobFiles(data.dir)) expect(f).toMatch(/\/blobs\/[0-9a-f]{2}\/[0-9a-f]{32}$/);
  });

  it('authenticates before anything else (401), and people may upload too (D10)', async () => {
    const anon = await upload(h, undefined, fileForm('a.png', png()));
    expect(anon.status).toBe(401);
    const human = await upload(h, w.human.token, fileForm('selfie.png', png()));
    expect(human.status).toBe(200);
    const hq = (await h.as(w.human.token).get('/files/quota')).body;
    expect(hq.dailyUsed).toBe(png().length);
  });
});

dbDescribe('the CDN is outside the rate limits (D26)', () => {
  let h: Harness;
  let w: World;
  const data = freshDataDir();
  beforeAll(async () => {
    h = await createHarness({
      env: { PARLEY_DATA_DIR: data.dir, PARLEY_RATE_GLOBAL: '1/2', PARLEY_RATE_MESSAGES: '1/2' },
    });
    w = await makeWorld(h);
  });
  afterAll(async () => {
    await h.close();
    data.remove();
  });

  it('serves a file 30 times in a row with no bucket headers, while the upload itself is limited', async () => {
    const up = await upload(h, w.bot.token, fileForm('a.png', png()));
    expect(up.status).toBe(200);
    expect(up.headers['x-ratelimit-bucket']).toBe('global');
    for (let i = 0; i < 30; i++) {
      const got = await cdn(h, up.body.url);
      expect(got.statusCode).toBe(200);
      expect(got.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
  it('sweeps blobs no file refers to (an upload a crash cut off), once they are an hour old', async () => {
    const kept = await upload(h, w.bot.token, fileForm('kept.png', png()));
    expect(kept.status).toBe(200);
    // Bytes placed without a row: what acceptUpload leaves when the process dies in between.
    const writer = await h.services.blobs.create();
    await writer.write(png());
    await writer.commit();
    const orphan = blobFiles(data.dir).find((f) => f.endsWith(writer.key));
    expect(orphan).toBeDefined();
    const before = blobFiles(data.dir).length;
    // Too recent: it may be an upload still finishing, on this process or another one.
    expect(await sweepOrphanBlobs(h.services.domain, h.services.blobs)).toBe(0);
    const hourAgo = new Date(Date.now() - 3_601_000);
    utimesSync(orphan as string, hourAgo, hourAgo);
    for (const f of blobFiles(data.dir)) if (f !== orphan) utimesSync(f, hourAgo, hourAgo);
    expect(await sweepOrphanBlobs(h.services.domain, h.services.blobs)).toBe(1);
    expect(blobFiles(data.dir)).toHaveLength(before - 1);
    expect(existsSync(orphan as string)).toBe(false);
    // Every file with a row is still served.
    expect((await cdn(h, kept.body.url)).statusCode).toBe(200);
  });
});
