// Answers `!cat` with an uploaded picture (D22 upload, then a message with msgType 1, D15).
//   PARLEY_TOKEN=<bot token> PARLEY_URL=http://127.0.0.1:8080 npx tsx packages/sdk/examples/cat-bot.ts
import { fileURLToPath } from 'node:url';
import { Bot } from '@parley/sdk';

const picture = fileURLToPath(new URL('./cat.png', import.meta.url));
const bot = new Bot({ token: process.env.PARLEY_TOKEN ?? '', url: process.env.PARLEY_URL });

bot.on('MESSAGE_CREATE', async (m, bot) => {
  if (m.content.trim() !== '!cat') return;
  // Upload from a path; sendFile picks msgType 1 (image) from the file's kind.
  await bot.rest.messages.sendFile(m.channelId, picture);
});

await bot.start();
console.log(`cat bot ${bot.me?.name} is online`);
process.once('SIGINT', () => void bot.stop().then(() => process.exit(0)));
process.once('SIGTERM', () => void bot.stop().then(() => process.exit(0)));
