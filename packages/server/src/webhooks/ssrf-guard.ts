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

/** Why an address may not be a target, or null when it is a public unicast address. */
export function blockedReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns IPv4-mapped IPv6 (::ffff:127.0.0.1) into the IPv4 address it carries.
    parsed = ipaddr.process(address);
  } catch {
    return `"${address}" is not an IP address`;
  }
  const range = parsed.range();
  return range === 'unicast' ? null : `${parsed.toString()} is in a ${range} range`;
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
      policy.allowInsecure ? 'must be an http:// or https:// URL' : 'must be an https:// URL (D37)',
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
