import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { errorFromBody, msgTypeOf, splitContent, verifyWebhook } from '../src/index.js';
import { Bucket } from '../src/bucket.js';

describe('splitContent (D14)', () => {
  it('keeps content of at most 2,000 code points whole, counting code points not UTF-16 units', () => {
    const emoji = '😀'.repeat(2000); // 4,000 UTF-16 units, 2,000 code points
    expect(splitContent(emoji)).toEqual([emoji]);
    const parts = splitContent(emoji + '😀');
    expect(parts.map((p) => Array.from(p).length)).toEqual([2000, 1]);
    expect(parts.join('')).toBe(emoji + '😀'); // no surrogate pair cut
  });

  it('cuts at the last line break, else the last space, else between code points', () => {
    const lines = `${'a'.repeat(1500)}\n${'b'.repeat(1000)}`;
    expect(splitContent(lines)).toEqual([`${'a'.repeat(1500)}\n`, 'b'.repeat(1000)]);
    const words = `${'a'.repeat(1500)} ${'b'.repeat(400)} ${'c'.repeat(400)}`;
    expect(splitContent(words)).toEqual([
      `${'a'.repeat(1500)} ${'b'.repeat(400)} `,
      'c'.repeat(400),
    ]);
    expect(splitContent('x'.repeat(4500))).toEqual([
      'x'.repeat(2000),
      'x'.repeat(2000),
      'x'.repeat(500),
    ]);
  });
});

describe('errorFromBody accepts both D5 forms', () => {
  it('the main form with retryAfter, and the simpler string form', () => {
    const h = new Headers({ 'x-request-id': 'rid' });
    expect(
      errorFromBody(
        429,
        { error: { code: 'RATE_LIMIT_EXCEEDED', message: 'slow', retryAfter: 0.25 } },
        h,
      ),
    ).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      status: 429,
      retryAfter: 0.25,
      requestId: 'rid',
    });
    expect(errorFromBody(401, { error: 'UNAUTHORIZED', message: 'bad token' }, h)).toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'bad token',
      status: 401,
    });
    expect(errorFromBody(502, '<html>', h)).toMatchObject({ code: 'INTERNAL_ERROR', status: 502 });
  });
});

describe('verifyWebhook (D38)', () => {
  const secret = 'whsec-test';
  const body = '{"type":"MESSAGE_DELETE","data":{"id":3,"channelId":2,"guildId":1}}';
  const sig = 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
  const now = 1_800_000_000_000;
  const headers = (extra: Record<string, string> = {}) => ({
    'x-service-signature': sig,
    'x-service-timestamp': String(now / 1000),
    ...extra,
  });

  it('returns the event of a correctly signed, fresh delivery', () => {
    expect(verifyWebhook(secret, body, headers(), { now: () => now })).toEqual(JSON.parse(body));
    expect(
      verifyWebhook(secret, Buffer.from(body), new Headers(headers()), { now: () => now }).type,
    ).toBe('MESSAGE_DELETE');
  });

  it('refuses a wrong signature, a re-serialized body and a stale timestamp', () => {
    expect(() => verifyWebhook('other', body, headers(), { now: () => now })).toThrow(
      /X-Service-Signature/,
    );
    expect(() =>
      verifyWebhook(secret, body.replace('{"id":3', '{ "id":3'), headers(), { now: () => now }),
    ).toThrow(expect.objectContaining({ code: 'BAD_SIGNATURE' }));
    expect(() => verifyWebhook(secret, body, headers(), { now: () => now + 301_000 })).toThrow(
      expect.objectContaining({ code: 'STALE_TIMESTAMP' }),
    );
    expect(
      verifyWebhook(secret, body, headers(), { now: () => now + 301_000, toleranceS: 600 }).type,
    ).toBe('MESSAGE_DELETE');
  });
});

describe('msgTypeOf (D15)', () => {
  it('maps the D22 formats to image, audio, video', () => {
    expect(['a.png', 'a.JPG', 'x/b.gif?x=1', 'c.mp3', 'd.wav', 'e.mp4'].map(msgTypeOf)).toEqual([
      1, 1, 1, 2, 2, 3,
    ]);
    expect(() => msgTypeOf('f.txt')).toThrow(/D22/);
  });
});

describe('Bucket: waits instead of overrunning (D26)', () => {
  it('lets at most the remaining requests go, then waits for the refill', async () => {
    let t = 0;
    const b = new Bucket('messages', () => t);
    b.update(
      new Headers({
        'x-ratelimit-limit': '20',
        'x-ratelimit-remaining': '2',
        'x-ratelimit-reset-after': '1.8',
      }),
    );
    await b.acquire();
    await b.acquire();
    let third = false;
    void b.acquire().then(() => (third = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(third).toBe(false);
    t += 1900; // the bucket is full again
    b.release();
    await new Promise((r) => setTimeout(r, 20));
    expect(third).toBe(true);
  });

  it('does not believe an older answer that reports more than is left', async () => {
    const t = 0;
    const b = new Bucket('global', () => t);
    b.update(
      new Headers({
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset-after': '2',
      }),
    );
    b.update(
      new Headers({
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '5',
        'x-ratelimit-reset-after': '1',
      }),
    );
    let got = false;
    void b.acquire().then(() => (got = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toBe(false);
  });
});
