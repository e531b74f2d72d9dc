import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { Bot, webhookHandler } from '../src/index.js';

// webhookHandler (D38): the same typed events over node:http and Fastify; a bad signature is
// refused, a repeated delivery id is acknowledged once, a failing listener gives 500 (D39 retries).
const secret = 'whsec_unit';
const body = JSON.stringify({
  type: 'MESSAGE_CREATE',
  data: {
    id: 5,
    channelId: 2,
    guildId: 1,
    content: 'hi',
    author: { id: 7, name: 'p' },
    timestamp: '2026-11-22T03:00:00.000Z',
  },
});
const headers = (delivery: string, b = body) => ({
  'content-type': 'application/json',
  'x-service-event': 'MESSAGE_CREATE',
  'x-service-signature': 'sha256=' + createHmac('sha256', secret).update(b).digest('hex'),
  'x-service-delivery': delivery,
  'x-service-attempt': '1',
  'x-service-timestamp': String(Math.floor(Date.now() / 1000)),
});

/** A Bot whose GET /bot/me answers bot user 7 (no server). */
function botUser7(): Bot {
  const me = {
    id: 1,
    name: 'b',
    avatar: '',
    description: '',
    botUser: { id: 7, name: 'b', isBot: true },
  };
  return new Bot({
    token: 't',
    fetch: async () => new Response(JSON.stringify(me), { status: 200 }),
  });
}

describe('webhookHandler', () => {
  it('node:http: verifies, emits typed events, dedupes on X-Service-Delivery, 500 when a listener fails', async () => {
    const hook = webhookHandler({ secret });
    const got: string[] = [];
    let fail = false;
    hook.on('MESSAGE_CREATE', (m) => {
      if (fail) throw new Error('listener failed');
      got.push(m.content);
    });
    const server = createServer(hook).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const post = (h: Record<string, string>, b = body) =>
      fetch(url, { method: 'POST', headers: h, body: b });
    expect((await post(headers('d1'))).status).toBe(200);
    expect((await post(headers('d1'))).status).toBe(200); // a retry of the same delivery
    expect(got).toEqual(['hi']);
    expect(
      (await post({ ...headers('d2'), 'x-service-signature': 'sha256=' + '0'.repeat(64) })).status,
    ).toBe(401);
    expect((await post({ ...headers('d3'), 'x-service-timestamp': '1000' })).status).toBe(401);
    const errors = console.error;
    console.error = () => {};
    fail = true;
    expect((await post(headers('d4'))).status).toBe(500);
    console.error = errors;
    fail = false;
    expect((await post(headers('d4'))).status).toBe(200); // the retry succeeds (not deduped)
    expect(got).toEqual(['hi', 'hi']);
    await new Promise((r) => server.close(r));
  });

  it('Fastify: app.register(handler.fastify) keeps the body raw and emits the same events', async () => {
    const hook = webhookHandler({ secret });
    const got: unknown[] = [];
    hook.on('event', (e) => void got.push(e.type));
    const app = Fastify();
    await app.register(hook.fastify, { path: '/hook' });
    const res = await app.inject({
      method: 'POST',
      url: '/hook',
      headers: headers('f1'),
      payload: body,
    });
    expect(res.statusCode).toBe(200);
    expect(got).toEqual(['MESSAGE_CREATE']);
    const bad = await app.inject({
      method: 'POST',
      url: '/hook',
      headers: headers('f2', body + ' '),
      payload: body,
    });
    expect(bad.statusCode).toBe(401);
    await app.close();
  });

  it("Bot.webhookHandler runs the bot's handlers and skips its own messages", async () => {
    const bot = botUser7();
    const seen: number[] = [];
    bot.on('MESSAGE_CREATE', (m) => void seen.push(m.author.id));
    const hook = bot.webhookHandler({ secret });
    expect((await hook.handle(body, headers('b1'))).status).toBe(200); // author 7 = the bot itself
    const other = body.replace('"author":{"id":7', '"author":{"id":8');
    expect((await hook.handle(other, headers('b2', other))).status).toBe(200);
    expect(seen).toEqual([8]);
  });

  it('Bot.webhookHandler: a handler that fails makes the delivery fail (500), so the server retries it (D39)', async () => {
    const bot = botUser7();
    let fail = true;
    const seen: string[] = [];
    bot.on('MESSAGE_CREATE', (m) => {
      if (fail) throw new Error('the database was away');
      seen.push(m.content);
    });
    const hook = bot.webhookHandler({ secret });
    const other = body.replace('"author":{"id":7', '"author":{"id":8');
    const errors = console.error;
    console.error = () => {};
    try {
      expect((await hook.handle(other, headers('r1', other))).status).toBe(500);
    } finally {
      console.error = errors;
    }
    expect(seen).toEqual([]);
    fail = false;
    // the server's retry of the same delivery is run again (a failed delivery is not remembered)
    expect((await hook.handle(other, headers('r1', other))).status).toBe(200);
    expect(seen).toEqual(['hi']);
    // and once it has succeeded, a repeat is acknowledged without running the handler again
    expect((await hook.handle(other, headers('r1', other))).status).toBe(200);
    expect(seen).toEqual(['hi']);
  });
});
