import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { bucketKey, bucketSpec, subjectOf } from '../../src/ratelimit/policy.js';
import { decide, take, type BucketState } from '../../src/ratelimit/token-bucket.js';

// The pure math every store shares (D25–D26), on explicit timestamps: no clock at all.
const GLOBAL = { rate: 5, burst: 10 };

describe('token bucket math', () => {
  it('starts full: a new bucket allows `burst` requests at one instant, counting down exactly', () => {
    let state: BucketState | undefined;
    const remaining: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = take(state, GLOBAL, 1000);
      expect(r.decision.allowed).toBe(true);
      expect(r.decision.limit).toBe(10);
      // D26: Reset-After = time until full = tokens missing / rate
      expect(r.decision.resetAfterMs).toBe((i + 1) * 200);
      expect(r.decision.atMs).toBe(1000);
      remaining.push(r.decision.remaining);
      state = r.state;
    }
    expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    const refused = take(state, GLOBAL, 1000);
    expect(refused.decision).toEqual({
      allowed: false,
      limit: 10,
      remaining: 0,
      resetAfterMs: 2000,
      retryAfterMs: 200, // one token at 5/s
      atMs: 1000,
    });
  });

  it('refills at `rate` per second, never beyond `burst`', () => {
    const empty: BucketState = { tokens: 0, atMs: 0 };
    expect(take(empty, GLOBAL, 100).decision.allowed).toBe(false);
    expect(take(empty, GLOBAL, 100).decision.retryAfterMs).toBe(100); // half a token missing
    expect(take(empty, GLOBAL, 200).decision.allowed).toBe(true);
    expect(take(empty, GLOBAL, 200).decision.remaining).toBe(0);
    // an hour idle still gives only `burst`
    const r = take(empty, GLOBAL, 3_600_000);
    expect(r.state.tokens).toBe(9);
    expect(r.decision.remaining).toBe(9);
  });

  it('a refused take reports the bucket unchanged (D26: it consumes nothing)', () => {
    const { decision, left } = decide(0.5, GLOBAL, 0);
    expect(decision.allowed).toBe(false);
    expect(left).toBe(0.5);
    expect(decision.retryAfterMs).toBe(100);
    expect(decision.resetAfterMs).toBe(1900);
  });

  it('a clock that steps back refills nothing (and takes nothing away)', () => {
    const r = take({ tokens: 3, atMs: 10_000 }, GLOBAL, 5_000);
    expect(r.decision.remaining).toBe(2);
  });

  it('fractional rates: 0.5/s needs 2 s per token', () => {
    const spec = { rate: 0.5, burst: 1 };
    const first = take(undefined, spec, 0);
    expect(first.decision.allowed).toBe(true);
    expect(take(first.state, spec, 0).decision.retryAfterMs).toBe(2000);
    expect(take(first.state, spec, 2000).decision.allowed).toBe(true);
  });
});

describe('bucket policy (D25)', () => {
  it('keys per bot, per human user, per client address, and per bucket', () => {
    const bot = subjectOf({ isBot: true, botId: 7, userId: 8 });
    const person = subjectOf({ isBot: false, botId: undefined, userId: 8 });
    expect(bucketKey('global', bot)).toBe('global:bot:7');
    expect(bucketKey('messages', bot)).toBe('messages:bot:7');
    expect(bucketKey('global', person)).toBe('global:user:8');
    // D54: IPv6 clients are keyed by their /64, IPv4-mapped ones by their IPv4 address
    expect(bucketKey('global', { kind: 'address', ip: '::1' })).toBe('global:ip:::/64');
    expect(bucketKey('global', { kind: 'address', ip: '2001:db8:1:2:3:4:5:6' })).toBe(
      'global:ip:2001:db8:1:2::/64',
    );
    expect(bucketKey('global', { kind: 'address', ip: '::ffff:127.0.0.1' })).toBe(
      'global:ip:127.0.0.1',
    );
    expect(bucketKey('global', { kind: 'address', ip: '127.0.0.1' })).toBe('global:ip:127.0.0.1');
  });

  it('figures come from the configuration, D25 defaults, `off` = null (D27, D42)', () => {
    const defaults = loadConfig({});
    expect(bucketSpec(defaults, 'global')).toEqual({ rate: 5, burst: 10 });
    expect(bucketSpec(defaults, 'messages')).toEqual({ rate: 10, burst: 20 });
    const custom = loadConfig({ PARLEY_RATE_GLOBAL: '50/100', PARLEY_RATE_MESSAGES: 'off' });
    expect(bucketSpec(custom, 'global')).toEqual({ rate: 50, burst: 100 });
    expect(bucketSpec(custom, 'messages')).toBeNull();
  });
});

describe('PARLEY_TRUST_PROXY (config)', () => {
  it('reads false, true, a hop count or addresses/CIDRs; refuses anything else by name', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ PARLEY_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ PARLEY_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ PARLEY_TRUST_PROXY: '10.0.0.0/8, ::1, loopback' }).trustProxy).toBe(
      '10.0.0.0/8,::1,loopback',
    );
    for (const bad of ['10.0.0.0/33', 'proxy.example', '1.2.3.4/8/1', '::1/129'])
      expect(() => loadConfig({ PARLEY_TRUST_PROXY: bad }), bad).toThrow(/PARLEY_TRUST_PROXY/);
  });
});
