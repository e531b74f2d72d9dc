// A dice bot with a slash command and a button (D64–D65):
//   /roll sides:<2..1000> count:<1..20>?  →  "🎲 2d6: 3 + 5 = **8**"  [Roll again]
// Run it with the bot's token:
//   PARLEY_TOKEN=<bot token> npx tsx packages/sdk/examples/dice-bot.ts
import { Bot, button, defineCommand, OptionType, row } from '@parley/sdk';

const roll = defineCommand({
  name: 'roll',
  description: 'Roll dice',
  options: [
    {
      type: OptionType.INTEGER,
      name: 'sides',
      description: 'Sides of each die',
      required: true,
      minValue: 2,
      maxValue: 1000,
    },
    {
      type: OptionType.INTEGER,
      name: 'count',
      description: 'How many dice (default 1)',
      minValue: 1,
      maxValue: 20,
    },
  ],
});

/** The answer: the dice, their sum, and a button that rolls the same dice again. */
const dice = (sides: number, count: number) => {
  const rolls = Array.from({ length: count }, () => 1 + Math.floor(Math.random() * sides));
  const sum = rolls.reduce((a, b) => a + b, 0);
  return {
    content: `🎲 ${count}d${sides}: ${rolls.join(' + ')} = **${sum}**`,
    components: [row(button(`roll:${sides}:${count}`, 'Roll again', { emoji: '🎲' }))],
  };
};

const bot = new Bot({ token: process.env.PARLEY_TOKEN ?? '', url: process.env.PARLEY_URL });

// i.options is typed from the declaration: sides is a number, count a number or undefined.
bot.command(roll, (i) => i.reply(dice(i.options.sides, i.options.count ?? 1)));

// "Roll again": the button's customId carries the dice; the message is updated in place.
bot.component('roll:', (i) => {
  const [, sides, count] = i.customId!.split(':').map(Number);
  return i.update(dice(sides!, count!));
});

// The whole list, global (every guild the bot is in); `{ guildId }` for one guild.
await bot.commands.set([roll]);
await bot.start();
console.log('dice bot online');
process.once('SIGTERM', () => void bot.stop().then(() => process.exit(0)));
process.once('SIGINT', () => void bot.stop().then(() => process.exit(0)));
