import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';

/**
 * The client address of a raw request, exactly as Fastify's `req.ip` computes it for the same
 * `trustProxy` setting (PARLEY_TRUST_PROXY): for requests Fastify never routes — gateway upgrades
 * (D54: failed ones draw from the address's bucket, D25). Fastify gets the same setting through
 * `trustProxyOption`.
 */
export function clientAddress(req: IncomingMessage, trust: boolean | number | string): string {
  if (trust === false) return req.socket.remoteAddress ?? '';
  return proxyAddr(req, trustFunction(trust));
}

type TrustFn = (addr: string, hop: number) => boolean;

function trustFunction(trust: true | number | string): TrustFn {
  if (trust === true) return () => true;
  if (typeof trust === 'number') return (_addr, hop) => hop < trust;
  return proxyAddr.compile(trust.split(',').map((e) => e.trim()));
}
