import { Permission } from '@parley/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { authenticate } from '../../src/domain/auth/authenticate.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { requireGuildChannel } from '../../src/domain/permissions/access.service.js';
import { AppError } from '../../src/errors/app-error.js';
import {
  createHarness,
  dbDescribe,
  dialect,
  expectError,
  makeUser,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';

// Issue 29: every API request authenticates, charges a bucket and checks its access before its
// own work. With their data cached (one node on SQLite, nothing changed since) each of these is
// answered at once, without a promise — a send used to create about 82 promises, a bare floor
// send 4 (bench/README, session 20). These tests keep those answers synchronous and the same as
// the awaited ones; on PostgreSQL every cache read is a round trip, so there only the answers
// are compared.
dbDescribe('the request path answers at once from its caches (issue 29)', () => {
  let h: Harness;
  let w: World;
  const sqlite = dialect === 'sqlite';

  beforeAll(async () => {
    // the buckets on, as a node runs by default (the harness turns them off)
    h = await createHarness({
      env: { PARLEY_RATE_GLOBAL: '50/10', PARLEY_RATE_MESSAGES: '50/10' },
    });
    w = await makeWorld(h);
    // one request of each caller fills the caches (token, bot row, standing, channel)
    expect((await h.as(w.bot.token).get(`/channels/${w.channelId}/messages`)).status).toBe(200);
  });
  afterAll(() => h.close());

  it('a cached bot token is authenticated without a promise, with the same principal', async () => {
    const d = h.services.domain;
    const first = await authenticate(d, h.services.codec, w.bot.token);
    const again = authenticate(d, h.services.codec, w.bot.token);
    if (sqlite) expect(again).not.toBeInstanceOf(Promise);
    expect(await again).toEqual(first);
    expect(first).toMatchObject({ userId: w.bot.userId, isBot: true, botId: w.bot.id });
  });

  it('an unknown or forged token is still refused, as a rejection or a throw', async () => {
    const d = h.services.domain;
    const forged = `${w.bot.token.slice(0, -4)}AAAA`;
    await expect(async () => authenticate(d, h.services.codec, forged)).rejects.toThrow(
      'Invalid token',
    );
    // the same token twice: a refusal is never remembered as a success
    await expect(async () => authenticate(d, h.services.codec, forged)).rejects.toThrow(
      'Invalid token',
    );
  });

  it('a cached access check is decided without a promise, refusals included', async () => {
    const d = h.services.domain;
    const bot = await authenticate(d, h.services.codec, w.bot.token);
    await requireGuildChannel(d, bot, w.channelId, Permission.SEND_MESSAGES);
    const again = requireGuildChannel(d, bot, w.channelId, Permission.SEND_MESSAGES);
    if (sqlite) expect(again).not.toBeInstanceOf(Promise);
    expect(await again).toMatchObject({ id: w.channelId, guild_id: w.guildId });

    // someone outside the guild: 403 once the standing (none) is cached, thrown at once
    const stranger = await makeUser(h, 'stranger');
    const outsider: Principal = {
      userId: stranger.id,
      name: 'stranger',
      isBot: false,
      botId: undefined,
    };
    await expect(async () =>
      requireGuildChannel(d, outsider, w.channelId, Permission.SEND_MESSAGES),
    ).rejects.toThrow('Not a member of this guild');
    let thrown: unknown;
    try {
      const answer = requireGuildChannel(d, outsider, w.channelId, Permission.SEND_MESSAGES);
      if (!sqlite) await answer;
      else expect.fail('expected a refusal thrown at once');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe('FORBIDDEN');
  });

  it('one node’s buckets decide at once; the answers over HTTP are unchanged', async () => {
    const decision = h.services.limiter.consume('test:fast-path', { rate: 1, burst: 2 });
    if (sqlite) expect(decision).not.toBeInstanceOf(Promise);
    expect(await decision).toMatchObject({ allowed: true, limit: 2, remaining: 1 });
    // D26: a send answers with its bucket's headers; a bad token with 401 (D5 form)
    const sent = await h
      .as(w.bot.token)
      .post(`/channels/${w.channelId}/messages`, { content: 'hello' });
    expect(sent.status).toBe(200);
    expect(sent.headers['x-ratelimit-bucket']).toBe('messages');
    expectError(await h.as('not-a-token').get('/bot/me'), 401, 'UNAUTHORIZED');
  });
});
