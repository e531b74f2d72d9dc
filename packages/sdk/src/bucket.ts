/**
 * Client side of the D25/D26 token buckets: one queue per bucket, fed by the `X-RateLimit-*`
 * headers of every answer, so that requests wait on the client instead of being refused.
 *
 * The server's headers give whole requests left (`Remaining`, rounded down) and the seconds until
 * the bucket is full (`Reset-After`). From them the refill rate is estimated from below:
 * the true token count t satisfies remaining ≤ t < remaining + 1, and limit − t = rate × resetAfter,
 * so (limit − remaining − 1) / resetAfter ≤ rate. Both estimates err on the waiting side; the
 * largest lower bound seen converges to the true rate. Until the first answer names the figures,
 * one request at a time goes out (a burst sent before any answer could otherwise overrun).
 */
export class Bucket {
  private limit: number | undefined;
  /** estimated whole tokens at `at` */
  private tokens = 0;
  private at = 0;
  /** tokens per ms (a lower bound) */
  private rate = 0;
  /** when the bucket is full again (`Reset-After`) */
  private fullAt = 0;
  private inflight = 0;
  private wakers: Array<() => void> = [];

  constructor(
    readonly name: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Wait until a request may go out in this bucket; call `release()` when its answer is in.
   * `onWait` hears once, with the estimated wait in ms, when the limit makes it wait.
   */
  async acquire(onWait?: (ms: number) => void): Promise<void> {
    let told = false;
    for (;;) {
      if (this.limit === undefined) {
        if (this.inflight === 0) break;
        await this.waitForRelease(1000);
        continue;
      }
      const available = this.available();
      if (available >= 1) break;
      const untilFull = this.fullAt - this.now();
      const wait = this.rate > 0 ? Math.ceil((1 - available) / this.rate) : untilFull;
      if (!told) onWait?.(Math.max(0, wait));
      told = true;
      await this.waitForRelease(
        Math.max(5, Math.min(wait, untilFull > 0 ? untilFull : wait, 5000)),
      );
    }
    this.inflight++;
  }

  release(): void {
    this.inflight = Math.max(0, this.inflight - 1);
    const w = this.wakers;
    this.wakers = [];
    for (const f of w) f();
  }

  /** Learn from an answer's `X-RateLimit-*` headers (D26). */
  update(headers: Headers): void {
    const limit = Number(headers.get('x-ratelimit-limit'));
    const remaining = Number(headers.get('x-ratelimit-remaining'));
    const resetAfter = Number(headers.get('x-ratelimit-reset-after'));
    if (!Number.isFinite(limit) || limit <= 0 || !Number.isFinite(remaining)) return;
    const now = this.now();
    // Answers can arrive out of order: one computed earlier may report more than is left now.
    // Keep whichever estimate is lower (both are safe), and the later moment of being full.
    const first = this.limit === undefined;
    const current = first ? Infinity : this.tokensAt(now);
    this.limit = limit;
    this.tokens = Math.min(remaining, current);
    this.at = now;
    const full = Number.isFinite(resetAfter) ? now + resetAfter * 1000 : now;
    this.fullAt = first || remaining <= current ? full : Math.max(this.fullAt, full);
    if (Number.isFinite(resetAfter) && resetAfter > 0 && limit - remaining - 1 > 0) {
      const lower = (limit - remaining - 1) / (resetAfter * 1000);
      this.rate = Math.max(this.rate, lower);
    }
  }

  /** After a 429: nothing is left until `retryAfterS` has passed. */
  exhausted(retryAfterS: number): void {
    this.tokens = 0;
    this.at = this.now() + retryAfterS * 1000;
    const refill = this.rate > 0 ? ((this.limit ?? 1) - 1) / this.rate : 0;
    this.fullAt = Math.max(this.fullAt, this.at + refill);
  }

  private available(): number {
    return this.tokensAt(this.now()) - this.inflight;
  }

  /** Estimated tokens in the bucket at `now` (requests in flight not deducted). */
  private tokensAt(now: number): number {
    const limit = this.limit ?? 0;
    // Before `at` (the end of a 429's wait) nothing is available.
    if (now < this.at) return 0;
    if (now >= this.fullAt) return limit;
    return Math.min(limit, this.tokens + (now - this.at) * this.rate);
  }

  private waitForRelease(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done(): void {
        clearTimeout(t);
        resolve();
      }
      this.wakers.push(done);
    });
  }
}
