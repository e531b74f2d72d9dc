// The echo bot's test, written with @parley/sdk/testing: a real Parley, a guild with a person
// and the bot, and the person talking to it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@parley/sdk/testing';
import { runExample } from './run-example.js';

let server: TestServer;
beforeAll(async () => void (server = await startTestServer()), 90_000);
afterAll(() => server?.stop(), 30_000);

it('echo-bot.ts answers with the same text, in the channel and in a DM', async () => {
  const {
    bot,
    people: [alice],
  } = await server.createGuild({ people: ['alice'] });
  const echo = await runExample('./echo-bot.ts', {
    PARLEY_TOKEN: bot.token,
    PARLEY_URL: server.url,
  });
  expect((await alice!.ask('hello echo')).content).toBe('hello echo');
  await alice!.dm(bot.userId, 'psst');
  expect((await alice!.waitForMessage()).content).toBe('psst');
  await echo.stop();
}, 60_000);
