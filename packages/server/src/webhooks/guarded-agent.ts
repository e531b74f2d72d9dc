import type { Agent, Dispatcher } from 'undici';
import { loadUndici } from '../lazy-modules.js';
import { checkedLookup, type TargetPolicy } from './ssrf-guard.js';

type Undici = Awaited<ReturnType<typeof loadUndici>>;
/** undici's `request` options, less the dispatcher (the agent is ours) */
export type GuardedRequest = Omit<NonNullable<Parameters<Undici['request']>[1]>, 'dispatcher'>;

/**
 * D37: the HTTP client of everything the server sends to an address someone else chose —
 * webhooks, Web Push, link previews: an undici Agent whose connections go only to addresses the
 * policy allows, checked at connection on the addresses actually used (no DNS rebinding). The
 * agent, and undici with it, is made on the first request (lazy-modules.ts: a server that never
 * sends anywhere never loads it).
 */
export class GuardedAgent {
  private made: Promise<{ agent: Agent; request: Undici['request'] }> | undefined;

  constructor(
    private readonly o: {
      policy: TargetPolicy;
      connectTimeoutMs: number;
      keepAliveTimeoutMs: number;
    },
  ) {}

  async request(
    url: string | URL,
    opts: GuardedRequest,
  ): Promise<Dispatcher.ResponseData<unknown>> {
    const { agent, request } = await (this.made ??= loadUndici().then((u) => ({
      agent: new u.Agent({
        connect: { lookup: checkedLookup(this.o.policy), timeout: this.o.connectTimeoutMs },
        keepAliveTimeout: this.o.keepAliveTimeoutMs,
      }),
      request: u.request,
    })));
    return request(url, { ...opts, dispatcher: agent });
  }

  /** Ends its connections once their requests are done (`destroy`: at once). */
  async close(how: 'close' | 'destroy' = 'close'): Promise<void> {
    const made = this.made;
    this.made = undefined;
    if (!made) return;
    const { agent } = await made;
    await (how === 'close' ? agent.close() : agent.destroy());
  }
}
