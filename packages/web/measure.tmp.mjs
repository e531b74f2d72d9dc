import { chromium } from 'playwright-core';
const origin = process.argv[2];
const phone = process.argv[3] === 'phone';
const b = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
});
const ctx = await b.newContext({
  viewport: phone ? { width: 360, height: 740 } : { width: 1280, height: 800 },
  colorScheme: process.argv[4] ?? 'light',
});
const p = await ctx.newPage();
p.on('console', (m) => console.log('console', m.type(), m.text()));
p.on('pageerror', (e) => console.log('pageerror', e.message));
const me = { id: 10, name: 'alice', avatar: origin + '/cdn/avatars/default.png', isBot: false };
const guild = {
  id: 1,
  name: 'Parley HQ',
  ownerId: 10,
  myPermissions: 15,
  bots: [30],
  roles: [{ id: 1, name: '@everyone', permissions: 7 }],
  channels: [
    { id: 2, guildId: 1, name: 'general', type: 0, topic: 'Say hi' },
    { id: 3, guildId: 1, name: 'random', type: 0, topic: '' },
  ],
};
const t0 = Date.parse('2026-11-23T20:00:00.000Z');
const msgs = [];
for (let i = 0; i < 70; i++)
  msgs.push({
    id: 1000 + i,
    channelId: 2,
    guildId: 1,
    content:
      i % 7 === 3
        ? 'A somewhat longer message to see how wrapping works in the message list when the text goes on for a while and more.'
        : `message number ${i}`,
    author:
      i % 3 === 0
        ? { id: 20, name: 'bob' }
        : i % 5 === 0
          ? { id: 30, name: 'echo' }
          : { id: 10, name: 'alice' },
    timestamp: new Date(t0 + i * 200000).toISOString(),
  });
const json = (route, body, status = 200) =>
  route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });
await p.route('**/app/v1/**', (route) => {
  const u = new URL(route.request().url());
  if (u.pathname === '/app/v1/users/@me') return json(route, me);
  if (u.pathname === '/app/v1/users/@me/dms')
    return json(route, {
      dms: [
        {
          channelId: 50,
          recipient: { id: 20, name: 'bob', avatar: '', isBot: false },
          lastMessageId: 2000,
        },
      ],
    });
  if (u.pathname === '/app/v1/bots')
    return json(route, {
      bots: [
        {
          bot: {
            id: 5,
            name: 'echo',
            avatar: '',
            description: 'Answers !ping',
            botUser: { id: 30, name: 'echo', isBot: true },
          },
          webhookUrl: 'https://example.com/hook',
          guilds: [1],
        },
      ],
    });
  if (u.pathname.endsWith('/quota'))
    return json(route, {
      dailyUsed: 5e9,
      dailyLimit: 85899345920,
      monthlyUsed: 1e11,
      monthlyLimit: 2147483648000,
    });
  if (u.pathname.endsWith('/deliveries'))
    return json(route, {
      deliveries: [
        {
          id: 1,
          deliveryId: 'a',
          type: 'MESSAGE_CREATE',
          state: 'delivered',
          attempts: 1,
          lastStatus: 200,
          lastError: null,
          lastLatencyMs: 12,
          nextAttemptAt: null,
          createdAt: new Date().toISOString(),
        },
        {
          id: 2,
          deliveryId: 'b',
          type: 'PING',
          state: 'failed',
          attempts: 2,
          lastStatus: 500,
          lastError: null,
          lastLatencyMs: 40,
          nextAttemptAt: null,
          createdAt: new Date().toISOString(),
        },
      ],
    });
  if (u.pathname === '/app/v1/sessions')
    return json(route, {
      sessions: [
        {
          id: 'x',
          createdAt: new Date().toISOString(),
          lastUsedAt: new Date().toISOString(),
          userAgent: 'Chromium on Linux',
          current: true,
        },
      ],
    });
  if (u.pathname.includes('/invites'))
    return json(route, {
      invites: [
        {
          code: 'abc',
          guildId: 1,
          url: origin + '/invite/abc',
          uses: 1,
          maxUses: 5,
          expiresAt: new Date(Date.now() + 86400000).toISOString(),
        },
      ],
    });
  return json(route, {}, 204);
});
await p.route('**/api/v1/**', (route) => {
  const u = new URL(route.request().url());
  if (u.pathname.endsWith('/members'))
    return json(route, {
      members: [
        { user: { id: 10, name: 'alice', avatar: '' }, joinedAt: new Date().toISOString() },
        { user: { id: 20, name: 'bob', avatar: '' }, joinedAt: new Date().toISOString() },
        { user: { id: 30, name: 'echo', avatar: '' }, joinedAt: new Date().toISOString() },
      ],
      hasMore: false,
    });
  if (u.pathname.endsWith('/messages'))
    return json(route, { messages: msgs.slice(-50).reverse(), hasMore: true });
  return json(route, {});
});
await p.routeWebSocket(/\/gateway/, (ws) => {
  ws.send(JSON.stringify({ op: 10, d: { heartbeatInterval: 30000 } }));
  ws.send(
    JSON.stringify({
      op: 0,
      t: 'READY',
      s: 1,
      d: {
        sessionId: 's',
        user: me,
        guilds: [guild],
        readStates: [{ channelId: 2, lastReadId: 1069 }],
        resumeWindowS: 300,
      },
    }),
  );
  ws.send(
    JSON.stringify({ op: 0, t: 'PRESENCE_UPDATE', s: 2, d: { userId: 20, status: 'online' } }),
  );
  ws.send(
    JSON.stringify({
      op: 0,
      t: 'MESSAGE_CREATE',
      s: 3,
      d: {
        id: 3000,
        channelId: 3,
        guildId: 1,
        content: 'unread',
        author: { id: 20, name: 'bob' },
        timestamp: new Date().toISOString(),
      },
    }),
  );
  ws.send(
    JSON.stringify({
      op: 0,
      t: 'TYPING_START',
      s: 4,
      d: { channelId: 2, userId: 20, at: new Date().toISOString() },
    }),
  );
  ws.onMessage(() => ws.send(JSON.stringify({ op: 11 })));
});
await p.goto(origin + '/g/1/2');
await p.waitForTimeout(1500);
console.log(
  JSON.stringify(
    await p.evaluate(() =>
      [...document.querySelectorAll('.msg')]
        .slice(-9)
        .map((li) => [
          li.textContent.slice(0, 22),
          Math.round(li.getBoundingClientRect().height),
          [...li.children].map(
            (c) =>
              c.tagName + '.' + c.className + ':' + Math.round(c.getBoundingClientRect().height),
          ),
        ]),
    ),
  ),
);
await b.close();
