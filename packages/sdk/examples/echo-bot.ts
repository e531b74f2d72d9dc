// An echo bot: answers every message with the same text. Run it with
//   PARLEY_TOKEN=<bot token> PARLEY_URL=http://127.0.0.1:8080 npx tsx packages/sdk/examples/echo-bot.ts
import { Bot } from '@parley/sdk';

const bot = new Bot({ token: process.env.PARLEY_TOKEN ?? '', url: process.env.PARLEY_URL });

bot
  .on('MESSAGE_CREATE', (m, bot) => bot.reply(m, m.content)) // its own messages are skipped
  .on('DM_MESSAGE_CREATE', (m, bot) => bot.reply(m, m.content));

await bot.start();
console.log(`echo bot ${bot.me?.name} is online`);
process.once('SIGINT', () => void bot.stop().then(() => process.exit(0)));
process.once('SIGTERM', () => void bot.stop().then(() => process.exit(0)));
