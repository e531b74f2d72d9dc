import {
  createDecipheriv,
  createECDH,
  createPublicKey,
  hkdfSync,
  randomBytes,
  verify,
  type ECDH,
} from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A LOCAL push service for the tests (D66: the far edge, mocked honestly). It does what a real
 * push service does with a request before delivering it — checks the VAPID JWT (RFC 8292: ES256
 * under the key in `k=`, `aud` = this service's origin, `exp` in the next 24 h, a `sub` contact) —
 * and what the browser then does with it: decrypts the RFC 8291 aes128gcm body with the
 * subscription's private key and auth secret. Written from the RFCs with node:crypto only, so
 * it checks the server's encryption (the `web-push` library) against an independent reading.
 */

/** A browser's side of one subscription: its ECDH P-256 key pair and auth secret. */
export class TestBrowser {
  readonly ecdh: ECDH = createECDH('prime256v1');
  readonly auth = randomBytes(16);
  constructor() {
    this.ecdh.generateKeys();
  }
  /** `PushSubscription.toJSON()`'s keys */
  get keys(): { p256dh: string; auth: string } {
    return {
      p256dh: this.ecdh.getPublicKey().toString('base64url'),
      auth: this.auth.toString('base64url'),
    };
  }

  /** RFC 8291 §3.4 + RFC 8188: one aes128gcm record, decrypted. */
  decrypt(body: Buffer): string {
    const salt = body.subarray(0, 16);
    const rs = body.readUInt32BE(16);
    const idlen = body[20] as number;
    const asPublic = body.subarray(21, 21 + idlen);
    const ciphertext = body.subarray(21 + idlen);
    if (idlen !== 65) throw new Error(`keyid must be the 65-byte sender key, got ${idlen}`);
    if (ciphertext.length > rs) throw new Error('more than one record');
    const uaPublic = this.ecdh.getPublicKey();
    const ecdhSecret = this.ecdh.computeSecret(asPublic);
    const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic]);
    const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, this.auth, keyInfo, 32));
    const cek = Buffer.from(
      hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16),
    );
    const nonce = Buffer.from(
      hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12),
    );
    const d = createDecipheriv('aes-128-gcm', cek, nonce);
    d.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
    const padded = Buffer.concat([
      d.update(ciphertext.subarray(0, ciphertext.length - 16)),
      d.final(),
    ]);
    // the last record: the content, then 0x02, then zero padding
    let end = padded.length - 1;
    while (end >= 0 && padded[end] === 0) end--;
    if (padded[end] !== 2) throw new Error('no last-record delimiter');
    return padded.subarray(0, end).toString('utf8');
  }
}

export interface ReceivedPush {
  /** the path of the endpoint (one per subscription) */
  path: string;
  headers: IncomingMessage['headers'];
  jwt: { header: Record<string, unknown>; claims: { aud: string; exp: number; sub: string } };
  /** the VAPID public key the request was signed with (`k=`) */
  k: string;
  /** the decrypted payload, parsed */
  payload: { title: string; body: string; url: string; tag: string };
}

export class PushService {
  readonly received: ReceivedPush[] = [];
  /** requests refused by the checks (each a reason) */
  readonly refused: string[] = [];
  private readonly browsers = new Map<string, TestBrowser>();
  /** answer these paths with this status instead of 201 (e.g. 410: gone) */
  readonly answers = new Map<string, number>();
  private server: Server | undefined;
  origin = '';
  private waiters: Array<() => void> = [];

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const status = this.handle(req, Buffer.concat(chunks));
        res.writeHead(status).end();
        for (const w of this.waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => this.server?.listen(0, '127.0.0.1', r));
    const { port } = this.server.address() as AddressInfo;
    this.origin = `http://127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()));
  }

  /** A new subscription: its endpoint on this service and the browser holding its keys. */
  subscribe(): { endpoint: string; keys: { p256dh: string; auth: string }; path: string } {
    const path = `/push/${randomBytes(8).toString('hex')}`;
    const b = new TestBrowser();
    this.browsers.set(path, b);
    return { endpoint: this.origin + path, keys: b.keys, path };
  }

  /** The pushes to `path` received so far. */
  to(path: string): ReceivedPush[] {
    return this.received.filter((p) => p.path === path);
  }

  /** Wait until `n` pushes reached `path` (or anything was refused). */
  async waitFor(path: string, n = 1, timeoutMs = 15_000): Promise<ReceivedPush[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.to(path).length < n) {
      if (this.refused.length > 0) throw new Error(`push refused: ${this.refused.join('; ')}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no push to ${path} in ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.to(path);
  }

  private handle(req: IncomingMessage, body: Buffer): number {
    const path = req.url ?? '';
    const browser = this.browsers.get(path);
    if (req.method !== 'POST' || !browser) return 404;
    try {
      const push = this.check(req, path, body, browser);
      this.received.push(push);
    } catch (err) {
      this.refused.push(`${path}: ${(err as Error).message}`);
      return 400;
    }
    return this.answers.get(path) ?? 201;
  }

  /** RFC 8030/8292/8291: what a push service and the browser require of a request. */
  private check(req: IncomingMessage, path: string, body: Buffer, b: TestBrowser): ReceivedPush {
    const h = req.headers;
    if (h['content-encoding'] !== 'aes128gcm') throw new Error('content-encoding not aes128gcm');
    if (!/^[0-9]+$/.test(String(h['ttl'] ?? ''))) throw new Error('no TTL');
    const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(String(h['authorization'] ?? ''));
    if (!m) throw new Error(`authorization is not "vapid t=…, k=…": ${h['authorization']}`);
    const [, token = '', k = ''] = m;
    const [h64 = '', c64 = '', s64 = ''] = token.split('.');
    const header = JSON.parse(Buffer.from(h64, 'base64url').toString()) as Record<string, unknown>;
    const claims = JSON.parse(
      Buffer.from(c64, 'base64url').toString(),
    ) as ReceivedPush['jwt']['claims'];
    if (header['alg'] !== 'ES256' || header['typ'] !== 'JWT') throw new Error('not an ES256 JWT');
    const point = Buffer.from(k, 'base64url');
    if (point.length !== 65 || point[0] !== 4)
      throw new Error('k is not an uncompressed P-256 key');
    const key = createPublicKey({
      key: {
        kty: 'EC',
        crv: 'P-256',
        x: point.subarray(1, 33).toString('base64url'),
        y: point.subarray(33, 65).toString('base64url'),
      },
      format: 'jwk',
    });
    const ok = verify(
      'sha256',
      Buffer.from(`${h64}.${c64}`),
      { key, dsaEncoding: 'ieee-p1363' },
      Buffer.from(s64, 'base64url'),
    );
    if (!ok) throw new Error('JWT signature does not verify');
    if (claims.aud !== this.origin) throw new Error(`aud ${claims.aud} is not ${this.origin}`);
    const now = Date.now() / 1000;
    if (!(claims.exp > now && claims.exp <= now + 24 * 3600)) throw new Error('exp out of range');
    if (!/^(mailto:|https:)/.test(claims.sub)) throw new Error(`sub ${claims.sub}`);
    const payload = JSON.parse(b.decrypt(body)) as ReceivedPush['payload'];
    return { path, headers: h, jwt: { header, claims }, k, payload };
  }
}
