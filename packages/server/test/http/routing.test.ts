import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectStatus,
  makeWorld,
  type Harness,
  type Reply,
  type World,
  expectError,
} from '../helpers/harness.js';

// D2: unknown routes → 404 NOT_FOUND, a wrong method on a known path → 405 METHOD_NOT_ALLOWED
// with an Allow header; both in the D5 form and with X-Request-Id (D7).

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** D2: routing errors also carry no member beyond code and message. */
function expectRoutingError(r: Reply, status: number, code: string, what: string): void {
  expectError(r, status, code, what);
  expect(Object.keys(r.body.error).sort()).toEqual(['code', 'message']);
}

const allowOf = (r: Reply): string[] =>
  String(r.headers['allow'] ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean)
    .sort();

dbDescribe('routing: 404 and 405 (D2)', () => {
  let h: Harness;
  let w: World;
  let msgId: number;

  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
    msgId = (
      await expectStatus(
        await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, { content: 'x' }),
        200,
      )
    ).body.id;
  });
  afterAll(async () => h.close());

  const call = (method: Method, url: string, auth: 'bot' | 'admin' | 'none' = 'bot') =>
    h.request({
      method,
      url,
      headers:
        auth === 'none'
          ? {}
          : {
              authorization: `Bearer ${auth === 'bot' ? w.bot.token : 'test-admin-token-0123456789'}`,
            },
    });

  it('a wrong method on a known path → 405 with the methods that exist in Allow', async () => {
    const cases: Array<[Method, string, string[], 'bot' | 'admin' | 'none']> = [
      ['POST', '/api/v1/bot/me', ['GET', 'HEAD', 'PATCH'], 'bot'], // D63 adds PATCH
      ['PUT', '/api/v1/bot/me', ['GET', 'HEAD', 'PATCH'], 'bot'], // D63 adds PATCH
      ['DELETE', '/api/v1/bot/me', ['GET', 'HEAD', 'PATCH'], 'bot'], // D63 adds PATCH
      ['PATCH', `/api/v1/channels/${w.channelId}/messages`, ['GET', 'HEAD', 'POST'], 'bot'],
      ['DELETE', `/api/v1/channels/${w.channelId}/messages`, ['GET', 'HEAD', 'POST'], 'bot'],
      ['GET', `/api/v1/channels/${w.channelId}/messages/${msgId}`, ['DELETE', 'PUT'], 'bot'],
      ['POST', `/api/v1/channels/${w.channelId}/messages/${msgId}`, ['DELETE', 'PUT'], 'bot'],
      // D59: a bot with MANAGE_CHANNELS edits and deletes channels under /api/v1
      ['PUT', `/api/v1/channels/${w.channelId}`, ['DELETE', 'GET', 'HEAD', 'PATCH'], 'bot'],
      ['POST', `/api/v1/guilds/${w.guildId}/members`, ['GET', 'HEAD'], 'bot'],
      // (DELETE …/members/:id is a route since D59: a bot with KICK_MEMBERS kicks)
      ['GET', `/api/v1/users/${w.human.id}/dm`, ['POST'], 'bot'],
      ['PATCH', '/api/v1/dm/channels/1/messages/2', ['DELETE', 'PUT'], 'bot'],
      // The path's shape decides, not whether its ids are valid or exist.
      ['PATCH', '/api/v1/channels/abc/messages', ['GET', 'HEAD', 'POST'], 'bot'],
      // D52: GET now lists users (it was the 405 issue #13 complained of).
      ['PUT', '/admin/v1/users', ['GET', 'HEAD', 'POST'], 'admin'],
      ['GET', '/admin/v1/bots/1/token', ['POST'], 'admin'],
      ['POST', '/healthz', ['GET', 'HEAD'], 'none'],
      ['DELETE', '/cdn/avatars/default.png', ['GET', 'HEAD'], 'none'],
    ];
    for (const [method, url, allow, auth] of cases) {
      const r = await call(method, url, auth);
      expectRoutingError(r, 405, 'METHOD_NOT_ALLOWED', `${method} ${url}`);
      expect(allowOf(r), `${method} ${url}`).toEqual(allow);
    }
  });

  it('unknown routes → 404 NOT_FOUND in the D5 form, without an Allow header', async () => {
    const cases: Array<[Method, string, 'bot' | 'admin' | 'none']> = [
      // D55: a GET of an unknown path outside the server's prefixes is the web app's (web.test.ts)
      ['POST', '/nope', 'none'],
      ['DELETE', '/nope/deeper', 'none'],
      ['GET', '/api', 'none'],
      ['GET', '/api/v1/nope', 'bot'],
      ['GET', '/api/v2/bot/me', 'bot'],
      ['GET', '/api/v1/bots/me', 'bot'],
      ['GET', '/api/v1/bot/me/', 'bot'],
      ['GET', '/API/V1/BOT/ME', 'bot'],
      ['POST', '/api/v1/channels', 'bot'],
      ['GET', `/api/v1/channels/${w.channelId}/messages/${msgId}/reactions`, 'bot'],
      // D59 made GET /api/v1/guilds/:id a bot's route; a path under it that no route has:
      ['GET', `/api/v1/guilds/${w.guildId}/nope`, 'bot'],
      ['GET', '/api/v1/dm/channels/1', 'bot'],
      ['DELETE', '/api/v1/users/1', 'bot'],
      ['GET', '/admin/v1/nope', 'admin'],
      ['GET', '/cdn/nope.png', 'none'],
    ];
    for (const [method, url, auth] of cases) {
      const r = await call(method, url, auth);
      expectRoutingError(r, 404, 'NOT_FOUND', `${method} ${url}`);
      expect(r.headers['allow']).toBeUndefined();
    }
  });

  it('a malformed URL (bad percent-encoding) → 400 VALIDATION_ERROR in the D5 form (D6)', async () => {
    for (const url of ['/%', '/api/v1/%E0%A4%A', `/api/v1/channels/%ZZ/messages`]) {
      expectRoutingError(await call('GET', url), 400, 'VALIDATION_ERROR', url);
    }
  });

  it('HEAD works where GET does (no body)', async () => {
    const r = await h.request({
      method: 'HEAD',
      url: '/api/v1/bot/me',
      headers: { authorization: `Bearer ${w.bot.token}` },
    });
    expect(r.status).toBe(200);
    expect(r.raw).toBe('');
  });
});
