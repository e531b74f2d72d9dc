import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { Bot, button, defineCommand, OptionType, row } from '../src/index.js';
import { startTestServer, type TestGuild, type TestServer } from '../src/testing.js';

// D64–D65 through the SDK against a real server: bot.commands.set (bulk overwrite),
// bot.command / bot.component / bot.autocomplete routing with typed options, answered by gateway
// (callback route) and by webhook (in the 2xx response body when in time, else the callback
// route) — driven by @parley/sdk/testing's people (command, press, autocomplete, react).

const roll = defineCommand({
  name: 'roll',
  description: 'Roll dice',
  options: [
    {
      type: OptionType.INTEGER,
      name: 'sides',
      description: 'Sides',
      required: true,
      minValue: 2,
      maxValue: 1000,
    },
    { type: OptionType.INTEGER, name: 'count', description: 'How many', minValue: 1 },
    {
      type: OptionType.STRING,
      name: 'mood',
      description: 'Mood',
      choices: [
        { name: 'Happy', value: 'happy' },
        { name: 'Sad', value: 'sad' },
      ],
    },
  ],
});
const secret = defineCommand({ name: 'secret', description: 'Only you' });
const slow = defineCommand({ name: 'slow', description: 'Takes a while' });
const fruit = defineCommand({
  name: 'fruit',
  description: 'Pick a fruit',
  options: [
    {
      type: OptionType.STRING,
      name: 'name',
      description: 'Fruit',
      required: true,
      autocomplete: true,
    },
  ],
});
const config = defineCommand({
  name: 'config',
  description: 'Settings',
  options: [
    {
      type: OptionType.SUB_COMMAND,
      name: 'set',
      description: 'Set one',
      options: [
        { type: OptionType.STRING, name: 'key', description: 'Key', required: true },
        { type: OptionType.BOOLEAN, name: 'on', description: 'On?', required: true },
      ],
    },
  ],
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The handlers, the same for the gateway bot and the webhook bot. */
function wire(bot: Bot, slowMs: number): void {
  bot.command(roll, async (i) => {
    expectTypeOf(i.options.sides).toEqualTypeOf<number>();
    expectTypeOf(i.options.count).toEqualTypeOf<number | undefined>();
    expectTypeOf(i.options.mood).toEqualTypeOf<'happy' | 'sad' | undefined>();
    const { sides, count = 1 } = i.options;
    await i.reply({
      content: `rolled ${count}d${sides}${i.options.mood ? ` (${i.options.mood})` : ''}`,
      components: [row(button(`roll:${sides}`, 'Roll again'), button('roll:x:1', 'Other'))],
    });
  });
  bot.command(secret, (i) => i.reply({ content: `psst ${i.user.name}`, ephemeral: true }));
  bot.command(slow, async (i) => {
    if (slowMs > 0) {
      // a webhook bot that answers late: the answer then takes the callback route
      await sleep(slowMs);
      await i.reply('late but here');
      return;
    }
    await i.defer();
    await sleep(300);
    await i.editReply('done thinking');
  });
  bot.command(config, (i) => i.reply(`${i.subcommand}: ${i.options.key}=${i.options.on}`));
  bot.autocomplete(fruit, (i) =>
    i.autocomplete(
      ['apple', 'apricot', 'banana']
        .filter((f) => f.startsWith(String(i.focused?.value)))
        .map((f) => ({ name: f, value: f })),
    ),
  );
  // the longest prefix wins: 'roll:x:' over 'roll:'
  bot.component('roll:', (i) =>
    i.update({ content: `again d${i.customId!.slice(5)} by ${i.user.name}` }),
  );
  bot.component('roll:x:', (i) => i.reply(`other ${i.customId}`));
}

let server: TestServer;
beforeAll(async () => void (server = await startTestServer()), 90_000);
afterAll(() => server?.stop(), 30_000);

describe('SDK commands (D64–D65)', () => {
  let g: TestGuild;
  let bot: Bot;
  beforeAll(async () => {
    g = await server.createGuild({ people: ['alice', 'bob'] });
    bot = new Bot({ token: g.bot.token, url: server.url });
    wire(bot, 0);
    const set = await bot.commands.set([roll, secret, slow, fruit, config], {
      guildId: g.guildId,
    });
    expect(set.map((c) => c.name)).toEqual(['roll', 'secret', 'slow', 'fruit', 'config']);
    await bot.start();
  }, 60_000);
  afterAll(() => bot?.stop());

  it('commands.set overwrites the whole list and keeps ids by name (D64)', async () => {
    const before = await bot.commands.list({ guildId: g.guildId });
    const again = await bot.commands.set([roll, secret, slow, fruit, config], {
      guildId: g.guildId,
    });
    expect(again.map((c) => c.id)).toEqual(before.map((c) => c.id));
    const temp = await bot.commands.set([], {});
    expect(temp).toEqual([]);
    expect(await bot.commands.list()).toEqual([]);
  });

  it('a command with typed options is answered; the reply names the interaction', async () => {
    const alice = g.person('alice');
    const r = await alice.command('roll', { sides: 20, count: 2, mood: 'happy' });
    expect(r.ephemeral).toBe(false);
    expect(r.message.content).toBe('rolled 2d20 (happy)');
    expect(r.message.interaction).toEqual({ id: r.id, name: 'roll', userId: alice.id });
    expect(r.message.components?.[0]?.components).toHaveLength(2);
    // not ephemeral: in history for everyone
    const bob = g.person('bob');
    const page = await bob.rest.messages.list(g.channelId, { limit: 5 });
    expect(page.messages.map((m) => m.id)).toContain(r.message.id);
  });

  it('buttons route by the longest customId prefix; update edits the message', async () => {
    const alice = g.person('alice');
    const bob = g.person('bob');
    const r = await alice.command('roll', { sides: 6 });
    const pressed = await bob.press(r.message, 'roll:6');
    expect(pressed.message.id).toBe(r.message.id);
    expect(pressed.message.content).toBe('again d6 by bob');
    const other = await bob.press(r.message, 'roll:x:1');
    expect(other.message.content).toBe('other roll:x:1');
    expect(other.message.id).not.toBe(r.message.id);
  });

  it('ephemeral replies reach only the invoker and never history', async () => {
    const alice = g.person('alice');
    const bob = g.person('bob');
    const r = await alice.command('secret');
    expect(r.ephemeral).toBe(true);
    expect(r.message.content).toBe('psst alice');
    const page = await bob.rest.messages.list(g.channelId, { limit: 20 });
    expect(page.messages.some((m) => m.content === 'psst alice')).toBe(false);
    expect(bob.received.some((m) => m.content === 'psst alice')).toBe(false);
  });

  it('defer shows thinking, then editReply answers in its place', async () => {
    const alice = g.person('alice');
    const thinking = await alice.command('slow', {}, { thinking: true });
    expect((thinking.message.flags ?? 0) & 128).toBe(128);
    const done = await alice.command('slow');
    expect(done.message.content).toBe('done thinking');
  });

  it('sub-commands and autocomplete', async () => {
    const alice = g.person('alice');
    expect((await alice.command('config set', { key: 'x', on: true })).message.content).toBe(
      'set: x=true',
    );
    expect(await alice.autocomplete('fruit', { name: 'ap' }, 'name')).toEqual([
      { name: 'apple', value: 'apple' },
      { name: 'apricot', value: 'apricot' },
    ]);
  });

  it('react as a person (D63)', async () => {
    const alice = g.person('alice');
    const m = await alice.send('react to me');
    await g.person('bob').react(m, '👍');
    const [seen] = (await alice.rest.messages.list(g.channelId, { limit: 1 })).messages;
    expect(seen?.reactions).toEqual([{ emoji: '👍', count: 1, me: false }]);
  });
});

describe('SDK commands by webhook (D65: the answer in the response body)', () => {
  let g: TestGuild;
  let http: Server;
  const bodies: Array<{ event: string; status: number; body: string }> = [];
  // The latest answer to a delivery of `event`: the bot's other events (its own messages, their
  // edits) are delivered by the same worker and may be answered after it.
  const answerTo = (event: string): string => {
    const found = bodies.filter((b) => b.event === event).at(-1);
    if (!found) throw new Error(`no ${event} delivery was answered`);
    return found.body;
  };
  beforeAll(async () => {
    g = await server.createGuild({ people: ['carol'] });
    const bot = new Bot({ token: g.bot.token, url: server.url });
    wire(bot, 1200);
    await bot.commands.set([roll, secret, slow], { guildId: g.guildId });
    const hook = bot.webhookHandler({ secret: g.bot.webhookSecret, interactionResponseMs: 400 });
    // node:http around handler.handle, to see what each delivery was answered with
    http = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void hook.handle(Buffer.concat(chunks), req.headers).then((r) => {
          bodies.push({ event: String(req.headers['x-service-event']), ...r });
          res.writeHead(r.status, { 'content-type': 'application/json' }).end(r.body);
        });
      });
    }).listen(0, '127.0.0.1');
    await new Promise((r) => http.once('listening', r));
    await g.bot.setWebhook(`http://127.0.0.1:${(http.address() as AddressInfo).port}/`);
  }, 60_000);
  afterAll(() => new Promise<void>((r) => http?.close(() => r())));

  it('a handler answering in time answers in the 2xx body; the invoker sees the reply', async () => {
    const carol = g.person('carol');
    const r = await carol.command('roll', { sides: 12 });
    expect(r.message.content).toBe('rolled 1d12');
    const delivered = bodies.find((b) => b.event === 'INTERACTION_CREATE');
    expect(delivered?.status).toBe(200);
    expect(JSON.parse(delivered!.body)).toMatchObject({
      type: 4,
      data: { content: 'rolled 1d12' },
    });
    const e = await carol.command('secret');
    expect(e.ephemeral).toBe(true);
    expect(JSON.parse(answerTo('INTERACTION_CREATE'))).toEqual({
      type: 4,
      data: { content: 'psst carol', flags: 1 },
    });
  });

  it('a late handler: the delivery is answered {ok:true} and the reply takes the callback route', async () => {
    const carol = g.person('carol');
    const n = bodies.length;
    const r = await carol.command('slow');
    expect(r.message.content).toBe('late but here');
    expect(bodies.slice(n).map((b) => [b.status, b.body])).toEqual([[200, '{"ok":true}']]);
  });

  it('buttons on a webhook bot: update in the response body', async () => {
    const carol = g.person('carol');
    const r = await carol.command('roll', { sides: 8 });
    const p = await carol.press(r.message, 'roll:8');
    expect(p.message.content).toBe('again d8 by carol');
    expect(JSON.parse(answerTo('INTERACTION_CREATE'))).toEqual({
      type: 7,
      data: { content: 'again d8 by carol' },
    });
  });
});
