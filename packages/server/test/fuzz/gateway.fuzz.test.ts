import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorld, type World } from '../helpers/harness.js';
import { startLiveServer, type LiveServer } from '../helpers/live-server.js';

// Issue #10, "What to build" 1 (gateway): random frames — sizes, ops, shapes, binary, bursts —
// sent to a real gateway connection. The only closes allowed are those of D30–D33 (4000 unknown
// error, 4001 unknown opcode, 4002 decode error / too big, 4008 rate limited); a connection that
// is not closed keeps working (a heartbeat is acknowledged); the server keeps answering.

const RUNS = Math.max(50, Math.floor(Number(process.env['PARLEY_FUZZ_RUNS'] ?? 1000) / 4));
const ALLOWED = new Set([4000, 4001, 4002, 4008]);

const weighted = (weight: number, arbitrary: fc.Arbitrary<string | Buffer>) => ({
  weight,
  arbitrary,
});
const frameArb: fc.Arbitrary<string | Buffer> = fc.oneof(
  // valid heartbeats with odd `d` values (answered, not closed)
  weighted(
    10,
    fc.jsonValue({ maxDepth: 1 }).map((d) => JSON.stringify({ op: 1, d })),
  ),
  weighted(
    1,
    fc.oneof(
      // well-formed JSON with random ops and payloads
      fc
        .record(
          {
            op: fc.oneof(
              fc.integer({ min: -2, max: 12 }),
              fc.integer(),
              fc.string(),
              fc.constant(null),
            ),
            d: fc.jsonValue({ maxDepth: 2 }),
            s: fc.jsonValue({ maxDepth: 1 }),
            t: fc.string({ maxLength: 10 }),
          },
          { requiredKeys: [] },
        )
        .map((f) => JSON.stringify(f)),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      // not JSON, odd Unicode, empty
      fc.string({ unit: 'grapheme', maxLength: 100 }),
      fc.string({ unit: 'binary', maxLength: 100 }),
      fc.constantFrom('', '{', 'null', '{"op":1}', '{"op":1,"d":"x"}', '{"op":1,"d":1e400}'),
      // around the 4096-byte limit, and far past it
      fc.integer({ min: 4000, max: 4200 }).map((n) => JSON.stringify({ op: 1, d: 'x'.repeat(n) })),
      fc.integer({ min: 5000, max: 70_000 }).map((n) => 'y'.repeat(n)),
      // binary frames
      fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
    ),
  ),
);

describe('gateway fuzz [sqlite]', () => {
  let live: LiveServer;
  let w: World;
  const closes = new Map<number, number>();
  let frames = 0;
  const started = Date.now();

  beforeAll(async () => {
    live = await startLiveServer({ env: { PARLEY_RATE_GATEWAY: '10/20' } });
    w = await makeWorld(live.h);
  });
  afterAll(async () => {
    console.log(
      `gateway fuzz: ${frames} frames on ${RUNS} connections in ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s; closes: ` +
        [...closes.entries()].map(([c, n]) => `${c}×${n}`).join(' '),
    );
    await live?.close();
  });

  it('random frames close only with D30–D33 codes; open connections keep working', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(frameArb, { minLength: 1, maxLength: 30 }), async (batch) => {
        live.clock.advance(1001); // D28: one connection attempt per second per bot
        const c = await live.connect(w.bot.token);
        await c.ready();
        for (const f of batch) {
          if (c.ws.readyState !== c.ws.OPEN) break;
          c.ws.send(f);
          frames++;
        }
        // a heartbeat must still be acknowledged, or the connection closed with an allowed code
        c.send({ op: 1, d: null });
        const closedOrAck = await Promise.race([
          c.closed.then((x) => ({ closed: x.code })),
          (async () => {
            for (;;) {
              const f = await c.next({ acks: true, timeoutMs: 5000 });
              if (f.op === 11) return { ack: true };
            }
          })().catch(() => c.closed.then((x) => ({ closed: x.code }))),
        ]);
        if ('closed' in closedOrAck) {
          closes.set(closedOrAck.closed, (closes.get(closedOrAck.closed) ?? 0) + 1);
          expect(ALLOWED.has(closedOrAck.closed), `close ${closedOrAck.closed}`).toBe(true);
        } else {
          closes.set(0, (closes.get(0) ?? 0) + 1); // 0 = stayed open
          await c.close(1000);
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    const alive = await live.h.request({ method: 'GET', url: '/healthz' });
    expect(alive.status).toBe(200);
  }, 3_600_000);
});
