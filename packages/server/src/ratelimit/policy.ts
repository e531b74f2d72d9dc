import ipaddr from 'ipaddr.js';
import type { Config, RateSpec } from '../config/config.js';

/** D25: the two REST buckets. */
export type BucketName = 'global' | 'messages';

/** Who a bucket belongs to (D25): a bot, a human user's session (D10), or a client address. */
export type Subject =
  | { readonly kind: 'bot'; readonly id: number }
  | { readonly kind: 'user'; readonly id: number }
  | { readonly kind: 'address'; readonly ip: string };

export function subjectOf(principal: {
  readonly isBot: boolean;
  readonly botId: number | undefined;
  readonly userId: number;
}): Subject {
  return principal.isBot && principal.botId !== undefined
    ? { kind: 'bot', id: principal.botId }
    : { kind: 'user', id: principal.userId };
}

/** The store key: one bucket per (bucket name, subject). */
export function bucketKey(bucket: BucketName, subject: Subject): string {
  const who =
    subject.kind === 'address' ? `ip:${addressKey(subject.ip)}` : `${subject.kind}:${subject.id}`;
  return `${bucket}:${who}`;
}

/**
 * D54: whom an address's bucket belongs to. One IPv6 /64 is one client (a single host is
 * routinely given a whole /64, and could otherwise take a fresh address per request); an
 * IPv4-mapped IPv6 address (`::ffff:198.51.100.7`, how a dual-stack socket reports IPv4) is its
 * IPv4 address. Anything unparsable is keyed as given.
 */
export function addressKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(ip.replace(/%.*$/, '')); // zone ids (fe80::1%eth0) are not part of it
  } catch {
    return ip;
  }
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const p = (parsed as ipaddr.IPv6).parts;
  return `${new ipaddr.IPv6([...p.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}

/** The configured figures (D27), or null when the operator turned the bucket off. */
export function bucketSpec(
  config: Pick<Config, 'rateGlobal' | 'rateMessages'>,
  bucket: BucketName,
): RateSpec | null {
  return bucket === 'messages' ? config.rateMessages : config.rateGlobal;
}
