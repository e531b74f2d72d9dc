import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { nextDelayMs, parseRetryAfter } from '../../src/webhooks/backoff.js';
import { sign, verify } from '../../src/webhooks/signing.js';
import {
  blockedReason,
  checkTarget,
  checkUrlForm,
  UnsafeTargetError,
} from '../../src/webhooks/ssrf-guard.js';

const strict = { allowInsecure: false, allowPrivate: false };
const publicDns = async () => [{ address: '93.184.216.34', family: 4 }];

describe('webhook signatures (D38)', () => {
  it('matches the published test vector', () => {
    // Issue 7 acceptance 1: the same vector GitHub documents for X-Hub-Signature-256.
    expect(sign("It's a Secret to Everybody", 'Hello, World!')).toBe(
      'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    );
  });

  it('equals an independent HMAC over the exact bytes and verifies in constant time', () => {
    const body = JSON.stringify({ type: 'MESSAGE_CREATE', data: { content: 'héllo 👋' } });
    const independent =
      'sha256=' + createHmac('sha256', 's3cret').update(Buffer.from(body, 'utf8')).digest('hex');
    expect(sign('s3cret', body)).toBe(independent);
    expect(verify('s3cret', body, independent)).toBe(true);
    expect(verify('s3cret', body + ' ', independent)).toBe(false);
    expect(verify('other', body, independent)).toBe(false);
    expect(verify('s3cret', body, 'sha256=00')).toBe(false);
  });
});

describe('retry schedule (D39)', () => {
  const delays = [5, 30, 120];
  it('follows the configured waits with ±20 % jitter, then stops', () => {
    expect(nextDelayMs(1, delays, () => 0)).toBe(4000);
    expect(nextDelayMs(1, delays, () => 1)).toBe(6000);
    expect(nextDelayMs(2, delays, () => 0.5)).toBe(30_000);
    expect(nextDelayMs(3, delays, () => 0.5)).toBe(120_000);
    expect(nextDelayMs(4, delays, () => 0.5)).toBeNull();
  });

  it('never retries sooner than Retry-After asks', () => {
    expect(nextDelayMs(1, delays, () => 0.5, 60)).toBe(60_000);
    expect(nextDelayMs(1, delays, () => 0.5, 1)).toBe(5000);
    expect(parseRetryAfter('120', 0)).toBe(120);
    expect(parseRetryAfter(new Date(90_000).toUTCString(), 30_000)).toBe(60);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
  });
});

describe('SSRF guard (D37)', () => {
  it('refuses http:// unless insecure webhooks are allowed', () => {
    expect(() => checkUrlForm('http://93.184.216.34/hook', strict)).toThrow(/https/);
    expect(checkUrlForm('http://93.184.216.34/hook', { ...strict, allowInsecure: true }).href).toBe(
      'http://93.184.216.34/hook',
    );
    expect(() => checkUrlForm('ftp://93.184.216.34/', { ...strict, allowInsecure: true })).toThrow(
      UnsafeTargetError,
    );
  });

  it.each([
    ['https://127.0.0.1/x', 'loopback'],
    ['https://10.0.0.1/x', 'private'],
    ['https://192.168.1.1/x', 'private'],
    ['https://172.16.5.4/x', 'private'],
    ['https://169.254.169.254/latest/meta-data', 'linkLocal'],
    ['https://100.64.0.1/x', 'carrierGradeNat'],
    ['https://0.0.0.0/x', 'unspecified'],
    ['https://224.0.0.1/x', 'multicast'],
    ['https://[::1]/x', 'loopback'],
    ['https://[::ffff:127.0.0.1]/x', 'loopback'],
    ['https://[fd00::1]/x', 'uniqueLocal'],
    ['https://[fe80::1]/x', 'linkLocal'],
    ['https://0x7f.1/x', 'loopback'],
    ['https://2130706433/x', 'loopback'],
    ['https://127.1/x', 'loopback'],
    ['https://0177.0.0.1/x', 'loopback'],
  ])('refuses %s (%s)', async (url, range) => {
    await expect(checkTarget(url, strict, publicDns)).rejects.toThrow(new RegExp(range));
  });

  it('refuses a host name that resolves to loopback (localhost, for real)', async () => {
    await expect(checkTarget('https://localhost/hook', strict)).rejects.toThrow(
      /non-public address/,
    );
  });

  it('refuses when ANY resolved address is private', async () => {
    const mixed = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ];
    await expect(checkTarget('https://hooks.example/x', strict, mixed)).rejects.toThrow(/private/);
  });

  it('accepts public addresses, and private ones when the operator allows them', async () => {
    expect((await checkTarget('https://hooks.example/x', strict, publicDns)).hostname).toBe(
      'hooks.example',
    );
    expect((await checkTarget('https://93.184.216.34/x', strict)).hostname).toBe('93.184.216.34');
    const open = { allowInsecure: true, allowPrivate: true };
    expect((await checkTarget('http://127.0.0.1:9/x', open)).port).toBe('9');
  });

  it('refuses credentials in the URL and garbage', async () => {
    await expect(checkTarget('https://u:p@93.184.216.34/', strict)).rejects.toThrow(/credentials/);
    await expect(checkTarget('not a url', strict)).rejects.toThrow(/valid URL/);
    expect(blockedReason('nonsense')).toMatch(/not an IP/);
  });
});
