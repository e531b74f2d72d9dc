import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * D37: webhook targets. https only (http when the operator allows insecure webhooks), and no
 * target on loopback, private, link-local (cloud metadata), CGNAT, multicast, reserved or
 * otherwise non-public ranges unless the operator allows private targets. Checked when the
 * address is set AND at every connection, on the addresses actually connected to (the delivery
 * agent's lookup goes through `checkedLookup`, so DNS rebinding cannot swap in a private address).
 */
export interface TargetPolicy {
  allowInsecure: boolean;
  allowPrivate: boolean;
}

export class UnsafeTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeTargetError';
  }
}

type Embedded = (bytes: number[]) => number[][];
interface Range {
  readonly cidr: [ipaddr.IPv4 | ipaddr.IPv6, number];
  readonly name: string;
  /** IPv6 ranges that carry IPv4 addresses: those addresses must be public too */
  readonly embeds?: Embedded;
}

const range = (cidr: string, name: string, embeds?: Embedded): Range => ({
  cidr: ipaddr.parseCIDR(cidr),
  name,
  ...(embeds ? { embeds } : {}),
});
const last32: Embedded = (b) => [b.slice(12, 16)];

/**
 * D54: targets must be globally routable unicast. IPv4: every special-purpose block of the IANA
 * registry (RFC 6890 and successors). First match wins, so narrower blocks come first.
 */
const V4_BLOCKED: readonly Range[] = [
  range('0.0.0.0/8', 'unspecified'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'carrierGradeNat'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'linkLocal'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'ietfProtocol'),
  range('192.0.2.0/24', 'documentation'),
  range('192.31.196.0/24', 'as112'),
  range('192.52.193.0/24', 'amt'),
  range('192.88.99.0/24', '6to4Relay'),
  range('192.168.0.0/16', 'private'),
  range('192.175.48.0/24', 'as112'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('255.255.255.255/32', 'broadcast'),
  range('240.0.0.0/4', 'reserved'),
];

/**
 * IPv6: only global unicast (2000::/3) outside its special blocks; addresses that carry an IPv4
 * address (IPv4-mapped, NAT64, 6to4, Teredo) are judged by what they carry. IPv4-compatible
 * `::/96` is deprecated and never a target (`[::127.0.0.1]` reached loopback).
 */
const V6_BLOCKED: readonly Range[] = [
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('::ffff:0:0/96', 'ipv4Mapped', last32),
  range('::/96', 'ipv4Compatible'),
  range('::ffff:0:0:0/96', 'ipv4Translated'),
  range('64:ff9b::/96', 'nat64', last32),
  range('64:ff9b:1::/48', 'nat64Local'),
  range('100::/64', 'discard'),
  // Teredo: the server's IPv4 address, and the client's (stored inverted)
  range('2001::/32', 'teredo', (b) => [b.slice(4, 8), b.slice(12, 16).map((x) => x ^ 0xff)]),
  range('2001:db8::/32', 'documentation'),
  range('2001::/23', 'ietfProtocol'),
  range('2002::/16', '6to4', (b) => [b.slice(2, 6)]),
  range('3fff::/20', 'documentation'),
  range('fc00::/7', 'uniqueLocal'),
  range('fe80::/10', 'linkLocal'),
  range('fec0::/10', 'siteLocal'),
  range('ff00::/8', 'multicast'),
];
const V6_GLOBAL = ipaddr.parseCIDR('2000::/3');

/** Why an address may not be a target, or null when it is a globally routable unicast address. */
export function blockedReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // IPv6 in the WHATWG URL parser's canonical form first: ipaddr.js reads any dotted tail as
    // IPv4-mapped (`::127.0.0.1` would pass for `::ffff:127.0.0.1`); the URL parser does not.
    parsed = ipaddr.parse(
      address.includes(':') ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address,
    );
  } catch {
    return `"${address}" is not an IP address`;
  }
  return blockedParsed(parsed);
}

function blockedParsed(parsed: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  const shown = parsed.toString();
  if (parsed.kind() === 'ipv4') {
    const v4 = parsed as ipaddr.IPv4;
    const hit = V4_BLOCKED.find(
      (r) => r.cidr[0].kind() === 'ipv4' && v4.match(r.cidr as [ipaddr.IPv4, number]),
    );
    return hit ? `${shown} is in a ${hit.name} range` : null;
  }
  const v6 = parsed as ipaddr.IPv6;
  const hit = V6_BLOCKED.find((r) => v6.match(r.cidr as [ipaddr.IPv6, number]));
  if (hit?.embeds) {
    for (const bytes of hit.embeds(v6.toByteArray())) {
      const inner = blockedParsed(ipaddr.fromByteArray(bytes));
      if (inner) return `${shown} (${hit.name}) carries ${inner}`;
    }
    return null;
  }
  if (hit) return `${shown} is in a ${hit.name} range`;
  if (!v6.match(V6_GLOBAL)) return `${shown} is not in the global unicast range 2000::/3`;
  return null;
}

/**
 * Parse and check a webhook URL's form (scheme, credentials, IP literal). The WHATWG parser
 * normalises odd IPv4 notations first (0x7f.1, 2130706433, 127.1 all become 127.0.0.1), so the
 * range check sees the real address.
 */
export function checkUrlForm(raw: string, policy: TargetPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeTargetError('is not a valid URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowInsecure))
    throw new UnsafeTargetError(
      policy.allowInsecure ? 'must be an http:// or https:// URL' : 'must be an https:// URL',
    );
  if (url.username !== '' || url.password !== '')
    throw new UnsafeTargetError('must not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !policy.allowPrivate) {
    const why = blockedReason(host);
    if (why) throw new UnsafeTargetError(`targets a non-public address: ${why}`);
  }
  return url;
}

type LookupAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemLookupAll: LookupAll = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses),
    );
  });

/** Full check when a webhook is set: the form, then every address the name resolves to. */
export async function checkTarget(
  raw: string,
  policy: TargetPolicy,
  lookupAll: LookupAll = systemLookupAll,
): Promise<URL> {
  const url = checkUrlForm(raw, policy);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) || policy.allowPrivate) return url;
  let addresses: Array<{ address: string }>;
  try {
    addresses = await lookupAll(host);
  } catch {
    throw new UnsafeTargetError(`host "${host}" does not resolve`);
  }
  for (const a of addresses) {
    const why = blockedReason(a.address);
    if (why) throw new UnsafeTargetError(`host "${host}" resolves to a non-public address: ${why}`);
  }
  return url;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | Array<{ address: string; family: number }>,
  family?: number,
) => void;

/**
 * A `lookup` for the outbound agent: resolves, refuses if ANY resolved address is blocked, and
 * hands the socket exactly the checked addresses. (Node calls lookup only for host names; IP
 * literals are checked by checkUrlForm before each attempt.)
 */
export function checkedLookup(policy: TargetPolicy) {
  return (
    hostname: string,
    options: { all?: boolean | undefined; family?: number | string | undefined },
    callback: LookupCallback,
  ): void => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, []);
      if (!policy.allowPrivate) {
        for (const a of addresses) {
          const why = blockedReason(a.address);
          if (why) {
            const e: NodeJS.ErrnoException = new UnsafeTargetError(
              `host "${hostname}" resolves to a non-public address: ${why}`,
            );
            e.code = 'EUNSAFETARGET';
            return callback(e, []);
          }
        }
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
