// The cat bot's test, written with @parley/sdk/testing.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@parley/sdk/testing';
import { runExample } from './run-example.js';

let server: TestServer;
beforeAll(async () => void (server = await startTestServer()), 90_000);
afterAll(() => server?.stop(), 30_000);

it('cat-bot.ts answers !cat with an uploaded picture the CDN serves (D15, D22)', async () => {
  const {
    bot,
    people: [bob],
  } = await server.createGuild({ people: ['bob'] });
  const cat = await runExample('./cat-bot.ts', { PARLEY_TOKEN: bot.token, PARLEY_URL: server.url });
  const answer = await bob!.ask('!cat');
  expect(answer.content).toMatch(new RegExp(`^${server.url}/cdn/files/\\d+/cat\\.png$`));
  const res = await fetch(answer.content);
  expect(res.headers.get('content-type')).toBe('image/png');
  await cat.stop();
}, 60_000);
