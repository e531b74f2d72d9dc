import { Permission } from '@parley/protocol';
import type { Config } from '../config/config.js';
import { createBot } from '../domain/bots/bots.service.js';
import { createChannel, setOverwrite } from '../domain/channels/channels.service.js';
import { createGuild, createRole } from '../domain/guilds/guilds.service.js';
import { putMember } from '../domain/members/members.service.js';
import { createSession, createUser } from '../domain/users/users.service.js';
import { openServices } from '../services.js';

/**
 * `parley seed --demo`: a guild with three channels (one only moderators can see), two people
 * and one bot that is a member, then how to use them. Run it as often as you like: each run
 * makes a new set.
 */
export async function seedDemo(config: Config): Promise<void> {
  const s = await openServices(config);
  try {
    const d = s.domain;
    const alice = await createUser(d, { name: 'alice', password: 'correct-horse-battery' });
    const bob = await createUser(d, { name: 'bob', password: 'correct-horse-battery' });
    const guild = await createGuild(d, { name: 'Demo Guild', ownerId: alice.id });
    const general = await createChannel(d, guild.id, { name: 'general', topic: 'Say hello' });
    const random = await createChannel(d, guild.id, { name: 'random' });
    const mods = await createChannel(d, guild.id, { name: 'moderators', topic: 'Staff only' });
    const modRole = await createRole(d, guild.id, { name: 'moderator', permissions: 1 | 2 | 4 });
    // @everyone cannot see #moderators; the moderator role can (D11 overwrites).
    await setOverwrite(d, mods.id, guild.id, { allow: 0, deny: Permission.VIEW_CHANNEL });
    await setOverwrite(d, mods.id, modRole.id, { allow: Permission.VIEW_CHANNEL, deny: 0 });
    await putMember(d, guild.id, bob.id, { roles: [modRole.id] });
    const bot = await createBot(d, s.codec, {
      ownerId: alice.id,
      name: 'demo-bot',
      description: 'The demo bot',
    });
    await putMember(d, guild.id, bot.bot.botUser.id, {});
    const bobSession = await createSession(d, bob.id);

    const api = d.urls.api;
    const out = {
      guild,
      channels: { general, random, moderators: mods },
      users: { alice, bob },
      bot: bot.bot,
      botToken: bot.token,
      webhookSecret: bot.webhookSecret,
      bobSessionToken: bobSession.token,
    };
    process.stdout.write(
      [
        JSON.stringify(out, null, 2),
        '',
        'Try it (the server must be running: npm start):',
        `  export BOT='${bot.token}'`,
        `  curl -s ${api}/bot/me -H "Authorization: Bearer $BOT"`,
        `  curl -s ${api}/guilds/${guild.id}/channels -H "Authorization: Bearer $BOT"`,
        `  curl -s -X POST ${api}/channels/${general.id}/messages -H "Authorization: Bearer $BOT" \\`,
        `       -H 'Content-Type: application/json' -d '{"content":"Hello from demo-bot"}'`,
        `  curl -s ${api}/channels/${general.id}/messages?limit=10 -H "Authorization: Bearer $BOT"`,
        `As bob (a person): use Authorization: Bearer ${bobSession.token}`,
        '',
      ].join('\n'),
    );
  } finally {
    await s.close();
  }
}
