import { describe, expect, it } from 'vitest';
import {
  Bot,
  EmbedBuilder,
  RestClient,
  escapeMarkdown,
  md,
  userMention,
  roleMention,
  channelMention,
  type Message,
} from '../src/index.js';

/** A fetch that records each request and answers `answer(url)` (JSON) or 204. */
function recorder(answer: (url: string, method: string) => unknown = () => ({ id: 1 })) {
  const calls: Array<{ method: string; url: string; body: unknown }> = [];
  const fetch = (async (url: string | URL, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    calls.push({
      method,
      url: String(url),
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    const out = answer(String(url), method);
    return out === undefined
      ? new Response(null, { status: 204 })
      : new Response(JSON.stringify(out), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        });
  }) as typeof globalThis.fetch;
  return { calls, fetch };
}

const msg: Message = {
  id: 42,
  channelId: 7,
  guildId: 3,
  content: 'q',
  author: { id: 9, name: 'p' },
  timestamp: '2026-11-26T00:00:00.000Z',
};

describe('SDK rich messages (D61–D63)', () => {
  it('reply() is a real reply: messageReference to the message; no allowedMentions by default (as discord.js)', async () => {
    const r = recorder();
    const rest = new RestClient({ token: 't', url: 'http://x', fetch: r.fetch });
    await rest.reply(msg, 'a');
    expect(r.calls[0]).toEqual({
      method: 'POST',
      url: 'http://x/api/v1/channels/7/messages',
      body: { content: 'a', messageReference: { messageId: 42 } },
    });
    // a DM message (no guildId) goes to the DM route
    await rest.reply(
      { id: 42, channelId: 7 },
      { content: 'b', allowedMentions: { repliedUser: false } },
    );
    expect(r.calls[1]?.url).toBe('http://x/api/v1/dm/channels/7/messages');
    expect(r.calls[1]?.body).toEqual({
      content: 'b',
      messageReference: { messageId: 42 },
      allowedMentions: { repliedUser: false },
    });
    // a channel without a message: a plain send, as before
    await rest.reply({ channelId: 7, guildId: 3 }, 'c');
    expect(r.calls[2]?.body).toEqual({ content: 'c' });
  });

  it('a client-wide allowedMentions applies to every send unless overridden', async () => {
    const r = recorder();
    const rest = new RestClient({
      token: 't',
      url: 'http://x',
      fetch: r.fetch,
      allowedMentions: { parse: [] },
    });
    await rest.messages.send(7, 'x');
    await rest.messages.send(7, { content: 'y', allowedMentions: { parse: ['users'] } });
    expect(r.calls.map((c) => (c.body as { allowedMentions: unknown }).allowedMentions)).toEqual([
      { parse: [] },
      { parse: ['users'] },
    ]);
  });

  it('attachments and embeds ride on the last part; an embed-only message has empty content', async () => {
    const r = recorder();
    const rest = new RestClient({ token: 't', url: 'http://x', fetch: r.fetch });
    const embed = new EmbedBuilder()
      .setTitle('T')
      .setColor(0xff0000)
      .addFields({ name: 'n', value: 'v' });
    await rest.messages.send(7, { embeds: [embed], attachments: ['http://x/cdn/files/1/a.png'] });
    expect(r.calls[0]?.body).toEqual({
      content: '',
      attachments: ['http://x/cdn/files/1/a.png'],
      embeds: [{ title: 'T', color: 0xff0000, fields: [{ name: 'n', value: 'v' }] }],
    });
  });

  it('react, reactions, pins and subscribe call the D63 routes (emoji URL-encoded)', async () => {
    const r = recorder((url, method) =>
      method === 'GET' && url.includes('/pins')
        ? { messages: [msg] }
        : method === 'GET'
          ? { users: [], hasMore: false }
          : method === 'PATCH'
            ? { id: 1 }
            : undefined,
    );
    const rest = new RestClient({ token: 't', url: 'http://x', fetch: r.fetch });
    await rest.messages.react(7, 42, '👍');
    await rest.dms.unreact(8, 43, '❤️');
    await rest.messages.removeReaction(7, 42, '👍', 9);
    await rest.messages.reactions(7, 42, '👍', { limit: 5 });
    await rest.messages.pin(7, 42);
    await rest.messages.unpin(7, 42);
    expect(await rest.messages.pins(7)).toEqual([msg]);
    await rest.bot.subscribe(['MESSAGE_REACTION_ADD']);
    expect(r.calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      `PUT http://x/api/v1/channels/7/messages/42/reactions/${encodeURIComponent('👍')}/@me`,
      `DELETE http://x/api/v1/dm/channels/8/messages/43/reactions/${encodeURIComponent('❤️')}/@me`,
      `DELETE http://x/api/v1/channels/7/messages/42/reactions/${encodeURIComponent('👍')}/9`,
      `GET http://x/api/v1/channels/7/messages/42/reactions/${encodeURIComponent('👍')}?limit=5`,
      'PUT http://x/api/v1/channels/7/pins/42',
      'DELETE http://x/api/v1/channels/7/pins/42',
      'GET http://x/api/v1/channels/7/pins',
      'PATCH http://x/api/v1/bot/me',
    ]);
    expect(r.calls[7]?.body).toEqual({ events: ['MESSAGE_REACTION_ADD'] });
  });

  it("a handler's message can reply, react and pin; its data stays plain JSON", async () => {
    const r = recorder();
    const bot = new Bot({ token: 't', url: 'http://x', fetch: r.fetch });
    const m = bot.withActions({ ...msg });
    expect(JSON.parse(JSON.stringify(m))).toEqual(msg);
    expect(Object.keys(m).sort()).toEqual(Object.keys(msg).sort());
    await m.reply('ok');
    await m.react('🎉');
    await m.pin();
    expect(r.calls.map((c) => c.url)).toEqual([
      'http://x/api/v1/channels/7/messages',
      `http://x/api/v1/channels/7/messages/42/reactions/${encodeURIComponent('🎉')}/@me`,
      'http://x/api/v1/channels/7/pins/42',
    ]);
    expect(r.calls[0]?.body).toEqual({ content: 'ok', messageReference: { messageId: 42 } });
  });

  it('EmbedBuilder checks the D61 limits', () => {
    expect(() => new EmbedBuilder().setTitle('x'.repeat(257))).toThrow(RangeError);
    expect(() => new EmbedBuilder().setColor(0x1000000)).toThrow(RangeError);
    expect(() =>
      new EmbedBuilder().addFields(
        ...Array.from({ length: 26 }, () => ({ name: 'a', value: 'b' })),
      ),
    ).toThrow(RangeError);
    expect(() => new EmbedBuilder().toJSON()).toThrow(RangeError);
    const e = new EmbedBuilder().setTimestamp(0).setFooter({ text: 'f' });
    expect(e.toJSON()).toEqual({ timestamp: '1970-01-01T00:00:00.000Z', footer: { text: 'f' } });
  });
});

describe('SDK markdown (D62)', () => {
  it('mention builders', () => {
    expect([userMention(1), roleMention(2), channelMention(3)]).toEqual(['<@1>', '<@&2>', '<#3>']);
  });
  it('escapeMarkdown makes every D62 marker literal', () => {
    expect(escapeMarkdown('**b** _i_ ~~s~~ ||x|| `c` > q # h - l [t](u) <@1> @everyone \\')).toBe(
      '\\*\\*b\\*\\* \\_i\\_ \\~\\~s\\~\\~ \\|\\|x\\|\\| \\`c\\` \\> q \\# h \\- l \\[t\\]\\(u\\) \\<\\@1\\> \\@everyone \\\\',
    );
    expect(escapeMarkdown('1. one\n 2. two')).toBe('1\\. one\n 2\\. two');
  });
  it('md helpers', () => {
    expect(md.bold('a')).toBe('**a**');
    expect(md.codeBlock('x', 'ts')).toBe('```ts\nx\n```');
    expect(md.link('a*b', 'https://e.example')).toBe('[a\\*b](https://e.example)');
    expect(md.noPreview('https://e.example')).toBe('<https://e.example>');
    expect(md.quote('a\nb')).toBe('> a\n> b');
  });
});
