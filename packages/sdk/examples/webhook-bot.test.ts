// The webhook bot's test, written with @parley/sdk/testing: the server delivers signed webhooks
// (D38, D68) to the example's node:http server on loopback.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@parley/sdk/testing';
import { freePort } from '../../server/test/helpers/process.js';
import { runExample } from './run-example.js';

let server: TestServer;
beforeAll(async () => void (server = await startTestServer()), 90_000);
afterAll(() => server?.stop(), 30_000);

it('webhook-bot.ts verifies signed deliveries and answers', async () => {
  const {
    bot,
    people: [carol],
  } = await server.createGuild({ people: ['carol'] });
  const port = await freePort();
  const hook = await runExample('./webhook-bot.ts', {
    PARLEY_TOKEN: bot.token,
    PARLEY_URL: server.url,
    PARLEY_WEBHOOK_SECRET: bot.webhookSecret,
    PORT: String(port),
  });
  await bot.setWebhook(`http://127.0.0.1:${port}/`);
  expect((await carol!.ask('hello hook')).content).toBe('hello hook');
  await hook.stop();
}, 60_000);
