import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Bot } from '../src/bot.js';
import { button, InteractionContext, linkButton, row, select } from '../src/interactions.js';

// D64–D65: the SDK's component builders and an interaction's answers (requests checked).
describe('SDK interactions (D65)', () => {
  it('builders make rows of buttons and selects', () => {
    expect(
      row(button('roll:again', 'Roll again'), linkButton('https://example.com', 'Docs')),
    ).toEqual({
      type: 1,
      components: [
        { type: 2, style: 1, label: 'Roll again', customId: 'roll:again' },
        { type: 2, style: 5, label: 'Docs', url: 'https://example.com' },
      ],
    });
    expect(select('c', [{ label: 'A', value: 'a' }], { maxValues: 1 })).toEqual({
      type: 3,
      customId: 'c',
      options: [{ label: 'A', value: 'a' }],
      maxValues: 1,
    });
  });

  it('reply, followUp and editReply call the token-authorized routes; a second callback is refused locally', async () => {
    const calls: Array<{ url: string; method: string; body: unknown; auth: unknown }> = [];
    const fake = (async (url: string, init: RequestInit) => {
      calls.push({
        url,
        method: init.method ?? 'GET',
        body: JSON.parse(init.body as string),
        auth: (init.headers as Record<string, string>)['authorization'],
      });
      const callback = url.endsWith('/callback');
      return new Response(callback ? null : '{"id":1}', { status: callback ? 204 : 200 });
    }) as unknown as typeof fetch;
    const i = new InteractionContext(
      {
        id: 9,
        token: 'pit_x',
        type: 2,
        channelId: 1,
        user: { id: 2, name: 'ada' },
        data: { commandId: 3, name: 'roll', options: [{ name: 'sides', value: 20 }] },
      },
      { url: 'http://h', botId: 5, fetch: fake },
    );
    expect(i.options).toEqual({ sides: 20 });
    await i.reply({ content: 'hi', ephemeral: true });
    await expect(i.defer()).rejects.toThrow(/already/);
    await i.followUp('more');
    await i.editReply('edited');
    expect(calls).toEqual([
      {
        url: 'http://h/api/v1/interactions/9/pit_x/callback',
        method: 'POST',
        body: { type: 4, data: { content: 'hi', flags: 1 } },
        auth: undefined,
      },
      {
        url: 'http://h/api/v1/webhooks/5/pit_x',
        method: 'POST',
        body: { content: 'more' },
        auth: undefined,
      },
      {
        url: 'http://h/api/v1/webhooks/5/pit_x/messages/@original',
        method: 'PATCH',
        body: { content: 'edited' },
        auth: undefined,
      },
    ]);
  });

  it('a webhook handler may take the answer for its response body', async () => {
    let sent: unknown;
    const i = new InteractionContext(
      {
        id: 9,
        token: 'pit_x',
        type: 2,
        channelId: 1,
        user: { id: 2, name: 'a' },
        data: { commandId: 3, name: 'r', options: [] },
      },
      {
        url: 'http://h',
        botId: 5,
        fetch: () => {
          throw new Error('no request expected');
        },
      },
    );
    i.respond = (b) => (sent = b);
    await i.reply('in the body');
    expect(sent).toEqual({ type: 4, data: { content: 'in the body' } });
  });
});

// D65 through bot.webhookHandler without a server: what each INTERACTION_CREATE delivery is
// answered with (the callback in the body, {ok:true} when the handler did not answer, 500 when it
// failed before answering, so the server tries again: D39).
describe('bot.webhookHandler and interactions (D65)', () => {
  const secret = 'whsec_unit';
  const delivery = (id: number, data: object) => {
    const body = JSON.stringify({
      type: 'INTERACTION_CREATE',
      data: {
        id,
        token: `pit_${id}`,
        type: 2,
        channelId: 1,
        user: { id: 2, name: 'ada' },
        ...data,
      },
    });
    return {
      body,
      headers: {
        'x-service-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
        'x-service-delivery': `d${id}`,
        'x-service-timestamp': String(Math.floor(Date.now() / 1000)),
      },
    };
  };
  const command = (name: string) => ({ data: { commandId: 3, name, options: [] } });

  it('answers in the body, {ok:true} without an answer, 500 when the handler fails first', async () => {
    const bot = new Bot({ token: 't', url: 'http://127.0.0.1:1' });
    bot.me = { id: 5, botUser: { id: 6 } } as NonNullable<Bot['me']>;
    bot.command('fast', (i) => i.reply({ content: 'hi', ephemeral: true }));
    bot.command('quiet', () => undefined);
    bot.command('broken', () => {
      throw new Error('handler failed');
    });
    bot.component('a:', (i) => i.update('short prefix'));
    bot.component('a:b:', (i) => i.update(`long prefix ${i.customId}`));
    const hook = bot.webhookHandler({ secret });
    const run = async (id: number, data: object) => {
      const d = delivery(id, data);
      return hook.handle(d.body, d.headers);
    };
    expect(await run(1, command('fast'))).toEqual({
      status: 200,
      body: JSON.stringify({ type: 4, data: { content: 'hi', flags: 1 } }),
    });
    expect(await run(2, command('quiet'))).toEqual({ status: 200, body: '{"ok":true}' });
    const errors = console.error;
    console.error = () => {};
    expect((await run(3, command('broken'))).status).toBe(500);
    console.error = errors;
    // the longest matching prefix wins
    const comp = (customId: string) => ({ type: 3, data: { customId, componentType: 2 } });
    expect(JSON.parse((await run(4, comp('a:b:7'))).body)).toEqual({
      type: 7,
      data: { content: 'long prefix a:b:7' },
    });
    expect(JSON.parse((await run(5, comp('a:x'))).body)).toEqual({
      type: 7,
      data: { content: 'short prefix' },
    });
    // nobody handles it: a plain acknowledgement
    expect(await run(6, comp('zzz'))).toEqual({ status: 200, body: '{"ok":true}' });
  });
});
