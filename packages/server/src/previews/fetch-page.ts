import { GuardedAgent } from '../webhooks/guarded-agent.js';
import { checkUrlForm, type TargetPolicy } from '../webhooks/ssrf-guard.js';

/**
 * D71: the one way the server fetches an address a person wrote: D37's guard (the form of every
 * URL, every redirect re-checked, the connected addresses checked at connection by the agent's
 * lookup — no DNS rebinding), a deadline for the whole fetch, a byte cap, no cookies, our own
 * User-Agent.
 */
export const PREVIEW_USER_AGENT = 'Parley-LinkPreview/1 (+https://github.com/parley)';
const MAX_REDIRECTS = 5;

export interface Fetched {
  url: string;
  contentType: string;
  body: Buffer;
  /** true when the body was cut at the cap */
  truncated: boolean;
}

export class GuardedFetcher {
  private readonly agent: GuardedAgent;

  constructor(
    private readonly policy: TargetPolicy,
    private readonly timeoutMs = 5_000,
  ) {
    this.agent = new GuardedAgent({
      policy,
      connectTimeoutMs: timeoutMs,
      keepAliveTimeoutMs: 1_000,
    });
  }

  /** GET `raw`, following at most 5 redirects (each checked), reading at most `maxBytes`. */
  async get(raw: string, maxBytes: number, accept: string): Promise<Fetched | undefined> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    let url = checkUrlForm(raw, this.policy);
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const res = await this.agent.request(url, {
        method: 'GET',
        signal,
        headers: { 'user-agent': PREVIEW_USER_AGENT, accept },
      });
      const location = res.headers['location'];
      if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string') {
        await res.body.dump();
        url = checkUrlForm(new URL(location, url).toString(), this.policy);
        continue;
      }
      if (res.statusCode !== 200) {
        await res.body.dump();
        return undefined;
      }
      const type = res.headers['content-type'];
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        const room = maxBytes - size;
        if (chunk.length >= room) {
          chunks.push(chunk.subarray(0, room));
          size = maxBytes;
          truncated = true;
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
      if (truncated) res.body.destroy();
      return {
        url: url.toString(),
        contentType: typeof type === 'string' ? type : '',
        body: Buffer.concat(chunks),
        truncated,
      };
    }
    return undefined;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
