import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPatiently, makeRemoteWorld, type RemoteWorld } from '../helpers/live-server.js';
import {
  call,
  runParley,
  startParley,
  stopParley,
  tempDir,
  type Running,
} from '../helpers/process.js';

// D8 and D36 across processes without Redis: the CLI (`parley admin …`) writes to the same SQLite
// database as the running server, from its own process. The server notices through the database
// alone: an event the CLI recorded reaches the bot, and a token reset made by the CLI closes the
// bot's connection with 4004 within a second.
const ADMIN = 'cli-gw-admin-token-0123456789';

describe('gateway and the CLI in another process (SQLite, no Redis)', () => {
  const data = tempDir('parley-gw-cli-');
  const env = {
    PARLEY_HOST: '127.0.0.1',
    PARLEY_PORT: '0',
    PARLEY_DATA_DIR: data.path,
    PARLEY_ADMIN_TOKEN: ADMIN,
    PARLEY_LOG_LEVEL: 'warn',
  };
  let server: Running | undefined;
  let w: RemoteWorld;

  const cli = async (...args: string[]): Promise<{ code: number | null; out: string }> => {
    const r = await runParley(['admin', ...args], env);
    return { code: r.code, out: r.stdout + r.stderr };
  };

  beforeAll(async () => {
    server = await startParley(env);
    w = await makeRemoteWorld(server.origin, ADMIN);
  }, 90_000);

  afterAll(async () => {
    await stopParley(server);
    data.remove();
  }, 30_000);

  it('an event recorded by the CLI reaches the bot; a CLI token reset closes it with 4004 within 1 s', async () => {
    const s = server as Running;
    const c = await connectPatiently(s.gatewayUrl, w.bot.token);
    await c.ready();
    const newcomer = await call(s.origin, 'POST', '/admin/v1/users', ADMIN, { name: 'newcomer' });
    const add = await cli('member', 'add', String(w.guildId), String(newcomer.body.id));
    expect(add.code, add.out).toBe(0);
    const joined = await c.dispatch('GUILD_MEMBER_ADD', 5000);
    expect(joined.d.user.id).toBe(newcomer.body.id);

    const reset = await cli('bot', 'reset-token', String(w.bot.id));
    const committed = Date.now(); // the CLI has exited: its reset is committed
    expect(reset.code, reset.out).toBe(0);
    expect(await c.closed).toMatchObject({ code: 4004 });
    expect(Date.now() - committed).toBeLessThan(1000);
  }, 90_000);
});
