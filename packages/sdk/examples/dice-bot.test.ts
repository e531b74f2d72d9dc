// The dice bot's test, written with @parley/sdk/testing: the example runs as its own process
// with its token; a person runs /roll over HTTP and presses "Roll again" (D64–D65).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@parley/sdk/testing';
import { runExample } from './run-example.js';

let server: TestServer;
beforeAll(async () => void (server = await startTestServer()), 90_000);
afterAll(() => server?.stop(), 30_000);

it('dice-bot.ts answers /roll with the dice and a Roll again button that rolls again', async () => {
  const {
    bot,
    people: [dana, eve],
  } = await server.createGuild({ people: ['dana', 'eve'] });
  const dice = await runExample('./dice-bot.ts', {
    PARLEY_TOKEN: bot.token,
    PARLEY_URL: server.url,
  });

  const first = await dana!.command('roll', { sides: 6, count: 3 });
  const m = /^🎲 3d6: (\d+) \+ (\d+) \+ (\d+) = \*\*(\d+)\*\*$/.exec(first.message.content);
  expect(m, first.message.content).not.toBeNull();
  const [a, b, c, sum] = m!.slice(1).map(Number);
  for (const d of [a!, b!, c!]) expect(d >= 1 && d <= 6).toBe(true);
  expect(sum).toBe(a! + b! + c!);
  expect(first.message.interaction).toEqual({ id: first.id, name: 'roll', userId: dana!.id });
  expect(first.message.components).toEqual([
    {
      type: 1,
      components: [{ type: 2, style: 1, label: 'Roll again', customId: 'roll:6:3', emoji: '🎲' }],
    },
  ]);

  // another member presses the button: the same message, rolled again
  const again = await eve!.press(first.message, 'roll:6:3');
  expect(again.message.id).toBe(first.message.id);
  expect(again.message.content).toMatch(/^🎲 3d6: \d+ \+ \d+ \+ \d+ = \*\*\d+\*\*$/);

  // the declaration's range is the server's to enforce (D64: 400 naming the option)
  await expect(dana!.command('roll', { sides: 1 })).rejects.toThrow(/sides/);
  await dice.stop();
}, 60_000);
