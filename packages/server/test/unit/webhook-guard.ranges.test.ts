import { describe, expect, it } from 'vitest';
import { blockedReason, checkTarget, checkUrlForm } from '../../src/webhooks/ssrf-guard.js';

// D54 (issue #10, finding 6): `https://[::127.0.0.1]/` was accepted (`::/96` counted as unicast).
// Webhook targets must be globally routable unicast: every special range is refused, and
// addresses that carry an IPv4 address (IPv4-mapped, NAT64, 6to4, Teredo) are judged by it.
const strict = { allowInsecure: false, allowPrivate: false };

describe('SSRF guard: only globally routable unicast targets (D54)', () => {
  it.each([
    // IPv4-compatible ::/96 (deprecated): never, whatever it carries
    ['::127.0.0.1', 'ipv4Compatible'],
    ['::7f00:1', 'ipv4Compatible'],
    ['::8.8.8.8', 'ipv4Compatible'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    // IPv4-mapped: judged by the IPv4 address
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::ffff:0:127.0.0.1', 'ipv4Translated'],
    // NAT64 (well-known prefix) with a private address inside; local-use NAT64
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal'],
    ['64:ff9b:1::8.8.8.8', 'nat64Local'],
    // 6to4 embedding private / loopback
    ['2002:7f00:1::1', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['2002:a9fe:a9fe::', 'linkLocal'],
    // Teredo: server 127.0.0.1; client 10.0.0.1 (stored inverted: f5ff:fffe)
    ['2001:0:7f00:1::1', 'loopback'],
    ['2001:0:808:808::f5ff:fffe', 'private'],
    // other special IPv6 ranges
    ['100::1', 'discard'],
    ['2001:2::1', 'ietfProtocol'],
    ['2001:10::1', 'ietfProtocol'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['fec0::1', 'siteLocal'],
    ['ff02::1', 'multicast'],
    ['4000::1', 'global unicast'],
    ['::2', 'ipv4Compatible'],
    // IPv4 special-purpose blocks
    ['0.1.2.3', 'unspecified'],
    ['100.127.255.254', 'carrierGradeNat'],
    ['192.0.0.8', 'ietfProtocol'],
    ['192.0.2.1', 'documentation'],
    ['192.31.196.1', 'as112'],
    ['192.52.193.1', 'amt'],
    ['192.88.99.1', '6to4Relay'],
    ['192.175.48.1', 'as112'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
  ])('refuses %s (%s)', (address, why) => {
    expect(blockedReason(address)).toMatch(new RegExp(why));
  });

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.1',
    '172.32.0.1',
    '198.20.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8', // IPv4-mapped public
    '64:ff9b::808:808', // NAT64 of 8.8.8.8
    '2002:808:808::1', // 6to4 of 8.8.8.8
    '2001:0:808:808::f7f7:f7f7', // Teredo: server 8.8.8.8, client 8.8.8.8
  ])('accepts %s', (address) => {
    expect(blockedReason(address)).toBeNull();
  });

  it('refuses the reported URL at setting time and at every connection (the form check)', async () => {
    await expect(checkTarget('https://[::127.0.0.1]/', strict)).rejects.toThrow(/ipv4Compatible/);
    expect(() => checkUrlForm('https://[::127.0.0.1]/', strict)).toThrow(/non-public/);
    expect(() => checkUrlForm('https://[64:ff9b::7f00:1]/', strict)).toThrow(/loopback/);
    // a host name resolving to such an address
    const dns = async () => [{ address: '2002:7f00:1::1', family: 6 }];
    await expect(checkTarget('https://hooks.example/', strict, dns)).rejects.toThrow(/6to4/);
    // the operator's switch still allows them (development)
    expect(
      checkUrlForm('https://[::127.0.0.1]/', { allowInsecure: false, allowPrivate: true }).hostname,
    ).toBe('[::7f00:1]');
  });
});
