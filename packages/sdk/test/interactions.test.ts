import { describe, expect, it } from 'vitest';
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
