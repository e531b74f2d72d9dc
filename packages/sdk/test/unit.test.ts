import { Webhook } from 'standardwebhooks';
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

describe('verifyWebhook with the Standard Webhooks headers (D68)', () => {
  // Signed by the standardwebhooks package (a third party): what any conforming sender makes.
  const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
  const body = '{"type":"MESSAGE_DELETE","data":{"id":3,"channelId":2,"guildId":1}}';
  const now = 1_800_000_000_000;
  const standard = (id: string, at: number, b = body) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, new Date(at), b),
  });
  const d38 = (id: string, at: number) => ({
    'x-service-signature': 'sha256=' + createHmac('sha256', secret).update(body).digest('hex'),
    'x-service-delivery': id,
    'x-service-timestamp': String(Math.floor(at / 1000)),
  });

  it('accepts a delivery signed only the standard way, and one signed both ways', () => {
    expect(verifyWebhook(secret, body, standard('msg_1', now), { now: () => now }).type).toBe(
      'MESSAGE_DELETE',
    );
    const both = { ...d38('msg_1', now), ...standard('msg_1', now) };
    expect(verifyWebhook(secret, body, both, { now: () => now }).type).toBe('MESSAGE_DELETE');
    // several signatures (a secret being rotated): one match is enough
    const multi = {
      ...both,
      'webhook-signature': `v1,${'A'.repeat(44)} ${both['webhook-signature']}`,
    };
    expect(verifyWebhook(secret, body, multi, { now: () => now }).type).toBe('MESSAGE_DELETE');
  });

  it('refuses an altered id, an altered time, a wrong key and an old delivery (5 minutes)', () => {
    const h = { ...d38('msg_1', now), ...standard('msg_1', now) };
    const code = (headers: Record<string, string>, at = now) => {
      try {
        verifyWebhook(secret, body, headers, { now: () => at });
        return 'accepted';
      } catch (e) {
        return (e as { code: string }).code;
      }
    };
    expect(code({ ...h, 'webhook-id': 'msg_2', 'x-service-delivery': 'msg_2' })).toBe(
      'BAD_SIGNATURE',
    );
    expect(code({ ...h, 'x-service-delivery': 'msg_2' })).toBe('BAD_SIGNATURE'); // unsigned copy
    const fresh = String(Math.floor(now / 1000) + 400);
    expect(
      code({ ...h, 'webhook-timestamp': fresh, 'x-service-timestamp': fresh }, now + 400_000),
    ).toBe('BAD_SIGNATURE');
    expect(code({ ...h, 'x-service-timestamp': fresh }, now + 400_000)).toBe('BAD_SIGNATURE');
    expect(code(h, now + 299_000)).toBe('accepted');
    expect(code(h, now + 301_000)).toBe('STALE_TIMESTAMP');
    expect(code(h, now - 301_000)).toBe('STALE_TIMESTAMP');
    expect(code({ ...standard('msg_1', now), 'webhook-signature': 'v1,' + 'A'.repeat(44) })).toBe(
      'BAD_SIGNATURE',
    );
    expect(code({ 'webhook-signature': h['webhook-signature'] })).toBe('BAD_SIGNATURE');
    expect(code({})).toBe('BAD_SIGNATURE');
  });

  it('a secret made before D68 (base64url) verifies both ways with its base64url-decoded key', () => {
    const key = Buffer.from('\xfb\xff\xfe pre-D68 key bytes', 'latin1');
    const old = 'whsec_' + key.toString('base64url');
    expect(old).toMatch(/[-_]/);
    const signed = new Webhook(key, { format: 'raw' }).sign('m', new Date(now), body);
    const headers = {
      'webhook-id': 'm',
      'webhook-timestamp': String(now / 1000),
      'webhook-signature': signed,
      'x-service-signature': 'sha256=' + createHmac('sha256', old).update(body).digest('hex'),
    };
    expect(verifyWebhook(old, body, headers, { now: () => now }).type).toBe('MESSAGE_DELETE');
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
