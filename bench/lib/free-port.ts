import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * A port nobody listens on right now, for a server a test or a benchmark starts. Picked below
 * the ephemeral range (Linux: /proc/sys/net/ipv4/ip_local_port_range, 32768–60999 by default):
 * a port the OS hands out for `listen(0)` is also one it hands out for outgoing connections, so
 * between our release and the server's bind another client could take it (EADDRINUSE, seen in
 * CI). Below the range only another listener can, and each candidate is bound once to check it.
 */
export async function freePort(): Promise<number> {
  let low = 32768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
  } catch {
    // not Linux: below the IANA dynamic range's usual start
  }
  const from = Math.max(1024, Math.min(low, 49152) - 12_000);
  for (let i = 0; i < 50; i++) {
    const port = from + Math.floor(Math.random() * (Math.min(low, 49152) - from));
    if (await bindable(port)) return port;
  }
  return bindable(0);
}

/** Binds `port` on 127.0.0.1 and lets go: the port bound, or 0 when it is taken. */
function bindable(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(0) : reject(err),
    );
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => {
        if (addr && typeof addr === 'object') resolve(addr.port);
        else reject(new Error('no port'));
      });
    });
  });
}
