import http from 'node:http';

/**
 * A small keep-alive JSON client over node:http. The benchmarks time single requests with it
 * (fetch adds its own overhead and queues we do not control).
 */
export interface JsonReply {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are checked where used
  readonly body: any;
  readonly raw: string;
  readonly headers: http.IncomingHttpHeaders;
}

export class HttpError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly reply: JsonReply,
  ) {
    super(`${method} ${path} → HTTP ${reply.status}: ${reply.raw.slice(0, 300)}`);
    this.name = 'HttpError';
  }
}

export class HttpClient {
  private readonly agent: http.Agent;
  private readonly url: URL;

  constructor(origin: string, maxSockets = 32) {
    this.url = new URL(origin);
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  /** `body` goes as JSON; `raw` as it is, with its content type (a multipart upload). */
  request(
    method: string,
    path: string,
    opts: {
      token?: string | undefined;
      body?: unknown;
      raw?: { contentType: string; body: Buffer };
    } = {},
  ): Promise<JsonReply> {
    const payload =
      opts.raw?.body ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    const headers: Record<string, string> = {};
    if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`;
    if (payload !== undefined) {
      headers['content-type'] = opts.raw?.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.url.hostname,
          port: this.url.port,
          method,
          path,
          headers,
          agent: this.agent,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const raw = Buffer.concat(chunks).toString('utf8');
            let body: unknown = undefined;
            if (raw !== '') {
              try {
                body = JSON.parse(raw);
              } catch {
                body = raw;
              }
            }
            resolve({ status: res.statusCode ?? 0, body, raw, headers: res.headers });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** The request, or an HttpError unless the status is one of `ok`. */
  async expect(
    method: string,
    path: string,
    ok: number | number[],
    opts: { token?: string | undefined; body?: unknown } = {},
  ): Promise<JsonReply> {
    const r = await this.request(method, path, opts);
    if (!(Array.isArray(ok) ? ok : [ok]).includes(r.status)) throw new HttpError(method, path, r);
    return r;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Runs `fn` over `items` with at most `limit` in flight; results in input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
