import { afterAll, describe, expect, it } from 'vitest';
import { connectPatiently, makeRemoteWorld, type Frame } from '../helpers/live-server.js';
import { call, startParley, stopParley, tempDir, type Running } from '../helpers/process.js';

// Issue 5, acceptance 4 (D31, D36): a real server process is stopped with SIGTERM while a person
// keeps sending, and started again on the same data directory. The bot's client gets op 7,
// resumes on the new process inside the resume window and misses nothing that was committed
// before, during or after the restart — checked against the channel's full history.
const ADMIN = 'restart-admin-token-0123456789';

describe('gateway across a server restart (SIGTERM, same data dir)', () => {
  const data = tempDir('parley-gw-restart-');
  const env = {
    PARLEY_HOST: '127.0.0.1',
    PARLEY_PORT: '0',
    PARLEY_DATA_DIR: data.path,
    PARLEY_ADMIN_TOKEN: ADMIN,
    PARLEY_RATE_GLOBAL: 'off',
    PARLEY_RATE_MESSAGES: 'off',
    PARLEY_LOG_LEVEL: 'warn',
  };
  let server: Running | undefined;

  afterAll(async () => {
    await stopParley(server);
    data.remove();
  }, 30_000);

  it('resumes after the restart and receives every committed message exactly once, in order', async () => {
    server = await startParley(env);
    const w = await makeRemoteWorld(server.origin, ADMIN);
    const client = await connectPatiently(server.gatewayUrl, w.bot.token);
    const { sessionId } = await client.ready();
    const frames: Frame[] = [];

    // A person keeps sending through whichever process is up; answers may fail mid-restart.
    let origin = server.origin;
    let sending = true;
    let n = 0;
    let sentAfterRestart = 0; // live sends the restarted process acknowledged
    const firstOrigin = origin;
    const sender = (async () => {
      while (sending) {
        const target = origin;
        const ok = await call(
          target,
          'POST',
          `/api/v1/channels/${w.channelId}/messages`,
          w.human.token,
          {
            content: `m${n++}`,
          },
        ).catch(() => undefined);
        if (ok?.status === 200 && target !== firstOrigin) sentAfterRestart++;
        // About 50 messages a second, and a pause while no process answers (load, not timing).
        await new Promise((r) => setTimeout(r, ok?.status === 200 ? 20 : 100));
      }
    })();

    // Take dispatches until a few arrived, then stop the server under load.
    while (frames.length < 10) frames.push(await client.dispatch('MESSAGE_CREATE'));
    const exit = stopParley(server);
    for (;;) {
      const f = await client.next({ timeoutMs: 15_000 });
      if (f.op === 7) break; // D30 RECONNECT comes before the close
      expect(f.t).toBe('MESSAGE_CREATE');
      frames.push(f);
    }
    expect(await client.closed).toMatchObject({ code: 1012 });
    expect((await exit)?.code).toBe(0);

    server = await startParley(env);
    origin = server.origin;
    // Messages committed while no process served the gateway, and after it came back.
    for (let i = 0; i < 5; i++)
      await call(origin, 'POST', `/api/v1/channels/${w.channelId}/messages`, w.human.token, {
        content: `after ${i}`,
      });

    const last = frames[frames.length - 1]?.s ?? 1;
    const resumed = await connectPatiently(server.gatewayUrl, w.bot.token, {
      query: `sessionId=${sessionId}&seq=${last}`,
    });
    expect((await resumed.next()).op).toBe(10);
    let resumedS = 0;
    for (;;) {
      const f = await resumed.next({ timeoutMs: 10_000 });
      if (f.t === 'RESUMED') {
        resumedS = f.s ?? 0;
        expect(resumedS).toBe((frames[frames.length - 1]?.s ?? 0) + 1);
        break;
      }
      expect(f.t).toBe('MESSAGE_CREATE');
      frames.push(f);
    }
    // Let the sender commit a few live messages on the new process too (they must arrive live),
    // then stop it: waiting on the count, not on a timer, keeps the check independent of speed.
    while (sentAfterRestart < 5) await new Promise((r) => setTimeout(r, 20));
    sending = false;
    await sender;
    // Whatever the sender committed after RESUMED arrives live; end with a marker message.
    const end = await call(
      origin,
      'POST',
      `/api/v1/channels/${w.channelId}/messages`,
      w.human.token,
      {
        content: 'the end',
      },
    );
    let endS = 0;
    for (;;) {
      const f = await resumed.dispatch('MESSAGE_CREATE', 10_000);
      if (f.d.id === end.body.id) {
        endS = f.s ?? 0;
        break;
      }
      frames.push(f);
    }

    // The channel's whole history (D16 pages, oldest first here) is exactly what arrived.
    const history: number[] = [];
    let after = 0;
    for (;;) {
      const page = await call(
        origin,
        'GET',
        `/api/v1/channels/${w.channelId}/messages?after=${after}&limit=100`,
        w.human.token,
      );
      const ids = (page.body.messages as Array<{ id: number }>).map((m) => m.id).reverse();
      history.push(...ids);
      if (!page.body.hasMore) break;
      after = ids[ids.length - 1] ?? after;
    }
    const got = frames.map((f) => f.d.id as number);
    expect(history[history.length - 1]).toBe(end.body.id);
    expect(got).toEqual(history.slice(0, -1));
    // s never skips or repeats across the restart: READY 1, events from 2, RESUMED in between.
    const s = [...frames.map((f) => f.s ?? 0), resumedS, endS].sort((x, y) => x - y);
    expect(s).toEqual(s.map((_, i) => i + 2));
    // 10 before the stop + 5 while reconnecting + at least 5 live from the sender.
    expect(got.length).toBeGreaterThanOrEqual(20);
    await resumed.close();
  }, 120_000);
});
