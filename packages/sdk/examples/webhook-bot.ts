// The echo bot on webhooks instead of the gateway (D38): the same handlers, one line changed.
// Set the bot's webhook URL to this server's address (with a public HTTPS address in
// production; `parley listen --forward-to` for local testing), then run
//   PARLEY_TOKEN=<bot token> PARLEY_WEBHOOK_SECRET=<secret> PORT=3000 npx tsx packages/sdk/examples/webhook-bot.ts
import { createServer } from 'node:http';
import { Bot } from '@parley/sdk';

const bot = new Bot({ token: process.env.PARLEY_TOKEN ?? '', url: process.env.PARLEY_URL });
bot.on('MESSAGE_CREATE', (m, bot) => bot.reply(m, m.content));

// Instead of `await bot.start()`: a node:http server (Express: app.post('/', handler);
// Fastify: app.register(handler.fastify, { path: '/' })).
const handler = bot.webhookHandler({ secret: process.env.PARLEY_WEBHOOK_SECRET ?? '' });
const server = createServer(handler).listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`webhook bot listening on http://127.0.0.1:${process.env.PORT ?? 3000}/`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
process.once('SIGINT', () => server.close(() => process.exit(0)));
