import { afterEach, describe, expect, it } from 'vitest';
import { hang, ok, Receiver } from '../helpers/receiver.js';
import {
  callOk,
  freePort,
  startParley,
  stopParley,
  tempDir,
  type Running,
} from '../helpers/process.js';

// Issue 7 acceptance 3: pending deliveries survive a restart (SIGTERM and SIGKILL) of a real
// server process and are delivered after it; none is lost (D39: deliveries survive restarts).
const ADMIN = 'restart-admin-token-0123456789';

describe('webhook deliveries across restarts', () => {
  let server: Running | undefined;
  let receiver: Receiver | undefined;
  const dirs: Array<{ remove(): void }> = [];
  afterEach(async () => {
    await stopParley(server, 'SIGKILL');
    await receiver?.close();
    for (const d of dirs.splice(0)) d.remove();
  });

  it.each(['SIGTERM', 'SIGKILL'] as const)(
    'a %s with deliveries pending loses none of them',
    async (signal) => {
      const dir = tempDir();
      dirs.push(dir);
      const [port, hookPort] = [await freePort(), await freePort()];
      const env = {
        PARLEY_DATA_DIR: dir.path,
        PARLEY_PORT: String(port),
        PARLEY_ADMIN_TOKEN: ADMIN,
        PARLEY_LOG_LEVEL: 'warn',
        PARLEY_RATE_GLOBAL: 'off',
        PARLEY_RATE_MESSAGES: 'off',
        PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
        PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
        PARLEY_WEBHOOK_RETRY_S: Array(40).fill('0.3').join(','),
      };
      server = await startParley(env);
      const o = server.origin;
      const user = await callOk(o, 'POST', '/admin/v1/users', ADMIN, { name: 'alice' });
      const { token } = await callOk(o, 'POST', `/admin/v1/users/${user.id}/sessions`, ADMIN);
      const guild = await callOk(o, 'POST', '/admin/v1/guilds', ADMIN, {
        name: 'g',
        ownerId: user.id,
      });
      const channel = await callOk(o, 'POST', `/admin/v1/guilds/${guild.id}/channels`, ADMIN, {
        name: 'c',
      });
      const bot = await callOk(o, 'POST', '/admin/v1/bots', ADMIN, { ownerId: user.id, name: 'b' });
      await callOk(
        o,
        'PUT',
        `/admin/v1/guilds/${guild.id}/members/${bot.bot.botUser.id}`,
        ADMIN,
        {},
      );
      // The receiver is down: every try fails and the deliveries stay pending.
      await callOk(o, 'PUT', `/admin/v1/bots/${bot.bot.id}/webhook`, ADMIN, {
        url: `http://127.0.0.1:${hookPort}/hook`,
      });
      const sent: number[] = [];
      for (let i = 0; i < 20; i++) {
        const m = await callOk(o, 'POST', `/api/v1/channels/${channel.id}/messages`, token, {
          content: `m${i}`,
        });
        sent.push(m.id);
      }
      const log = await callOk(o, 'GET', `/admin/v1/bots/${bot.bot.id}/deliveries`, ADMIN);
      expect(
        log.deliveries.filter((d: { type: string }) => d.type === 'MESSAGE_CREATE'),
      ).toHaveLength(20);
      expect(log.deliveries.every((d: { state: string }) => d.state === 'pending')).toBe(true);

      const exit = await stopParley(server, signal);
      expect(exit?.signal ?? exit?.code).toBe(signal === 'SIGKILL' ? 'SIGKILL' : 0);
      receiver = await new Receiver().listen(hookPort);
      server = await startParley(env);

      // Every message arrives; retries of one delivery share its id, so dedupe on it (D38).
      const deadline = Date.now() + 45_000;
      const delivered = new Map<string, number>();
      while (delivered.size < 20 + 1 && Date.now() < deadline) {
        for (const r of receiver.received) {
          const body = JSON.parse(r.body.toString('utf8'));
          if (body.type === 'MESSAGE_CREATE')
            delivered.set(String(r.headers['x-service-delivery']), body.data.id);
        }
        if ([...delivered.values()].length >= 20) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect([...new Set(delivered.values())].sort()).toEqual([...sent].sort());
      const after = await callOk(
        server.origin,
        'GET',
        `/admin/v1/bots/${bot.bot.id}/deliveries`,
        ADMIN,
      );
      for (const d of after.deliveries.filter(
        (x: { type: string }) => x.type === 'MESSAGE_CREATE',
      )) {
        expect(['delivered', 'pending']).toContain(d.state);
      }
    },
    90_000,
  );

  // D72 (issue 22): a try cut short by a crash was made as far as the receiver can tell (it
  // got the request); the next one must say it is the second (X-Service-Attempt: 2), not the
  // first again. The try is counted when claimed, before it is sent.
  it('a try made again after a SIGKILL carries its true attempt number', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const port = await freePort();
    receiver = await new Receiver().answer(hang).always(ok).listen();
    const env = {
      PARLEY_DATA_DIR: dir.path,
      PARLEY_PORT: String(port),
      PARLEY_ADMIN_TOKEN: ADMIN,
      PARLEY_LOG_LEVEL: 'warn',
      PARLEY_RATE_GLOBAL: 'off',
      PARLEY_RATE_MESSAGES: 'off',
      PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
      PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
    };
    server = await startParley(env);
    const o = server.origin;
    const user = await callOk(o, 'POST', '/admin/v1/users', ADMIN, { name: 'alice' });
    const bot = await callOk(o, 'POST', '/admin/v1/bots', ADMIN, { ownerId: user.id, name: 'b' });
    await callOk(o, 'PUT', `/admin/v1/bots/${bot.bot.id}/webhook`, ADMIN, { url: receiver.url });
    // A test event (D40): one delivery, whose first try the receiver holds without answering.
    const test = await callOk(o, 'POST', `/admin/v1/bots/${bot.bot.id}/webhook/test`, ADMIN);
    const [first] = await receiver.waitFor(1);
    expect(first?.headers['x-service-attempt']).toBe('1');
    await stopParley(server, 'SIGKILL');
    server = await startParley(env);
    const received = await receiver.waitFor(2, 30_000);
    const again = received[1];
    expect(again?.headers['x-service-delivery']).toBe(first?.headers['x-service-delivery']);
    expect(again?.headers['x-service-attempt']).toBe('2');
    const deadline = Date.now() + 10_000;
    let view = await callOk(server.origin, 'GET', `/admin/v1/bots/${bot.bot.id}/deliveries`, ADMIN);
    while (
      view.deliveries.find((d: { id: unknown }) => d.id === test.id)?.state !== 'delivered' &&
      Date.now() < deadline
    ) {
      await new Promise((r) => setTimeout(r, 100));
      view = await callOk(server.origin, 'GET', `/admin/v1/bots/${bot.bot.id}/deliveries`, ADMIN);
    }
    expect(view.deliveries.find((d: { id: unknown }) => d.id === test.id)).toMatchObject({
      state: 'delivered',
      attempts: 2,
    });
  }, 90_000);
});
