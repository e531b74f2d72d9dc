import { randomBytes } from 'node:crypto';
import { Permission } from '@parley/protocol';
import type { Config } from '../config/config.js';
import { createBot } from '../domain/bots/bots.service.js';
import {
  operatorCreateChannel as createChannel,
  operatorCreateRole as createRole,
  operatorSetOverwrite as setOverwrite,
} from '../domain/admin/operator.js';
import { createGuild } from '../domain/guilds/guilds.service.js';
import { insertInvite, inviteView, usable } from '../domain/invites/invites.service.js';
import { putMember } from '../domain/members/members.service.js';
import { createSession, createUser } from '../domain/users/users.service.js';
import { openServices } from '../services.js';
import { adoptRecordedOrigin } from '../domain/server-origin.js';

/** The settings row that remembers the demo, so a second run does not make a second one. */
const DEMO_KEY = 'demo';

interface DemoMarker {
  guildId: number;
  login: string;
}

/** A password for the demo person: random (a demo on a reachable server is still a login). */
const demoPassword = (): string => randomBytes(12).toString('base64url');

/**
 * `parley seed --demo`: a guild with three channels (one only moderators can see), two people
 * and one bot that is a member, an invite to the guild, then how to use them: the bot's token
 * with ready-made curl lines, and a login (name + password) for the demo person, alice, who owns
 * the guild. Run twice, it makes nothing new: it says the demo is already there, with the login
 * name and the invite URL (the password is only shown when it is made).
 */
export async function seedDemo(config: Config): Promise<void> {
  const s = await openServices(config);
  try {
    const d = s.domain;
    await adoptRecordedOrigin(d);
    const marker = await d.db
      .selectFrom('settings')
      .select('value')
      .where('key', '=', DEMO_KEY)
      .executeTakeFirst();
    if (marker) {
      const m = JSON.parse(marker.value) as DemoMarker;
      const guild = await d.db
        .selectFrom('guilds')
        .select(['id', 'name'])
        .where('id', '=', m.guildId)
        .executeTakeFirst();
      if (guild) {
        const now = d.clock.now();
        const invites = await d.db
          .selectFrom('invites')
          .selectAll()
          .where('guild_id', '=', guild.id)
          .orderBy('created_at', 'asc')
          .execute();
        const live = invites.find((i) => usable(i, now));
        const invite = live ? inviteView(d, live) : await insertInvite(d, guild.id, null, {});
        process.stdout.write(
          [
            `The demo is already there: guild ${guild.id} "${guild.name}" (nothing was added).`,
            `  login:  ${m.login} (the password was printed when the demo was made)`,
            `  invite: ${invite.url}`,
            '',
          ].join('\n'),
        );
        return;
      }
      // The demo guild was deleted: make a new demo (its people may still exist, so new names).
    }
    const suffix = marker ? `-${randomBytes(2).toString('hex')}` : '';
    const password = demoPassword();
    const alice = await createUser(d, { name: `alice${suffix}`, password });
    const bob = await createUser(d, { name: `bob${suffix}`, password: demoPassword() });
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
      name: `demo-bot${suffix}`,
      description: 'The demo bot',
    });
    await putMember(d, guild.id, bot.bot.botUser.id, {});
    const bobSession = await createSession(d, bob.id);
    const invite = await insertInvite(d, guild.id, alice.id, {});
    const value = JSON.stringify({ guildId: guild.id, login: alice.name } satisfies DemoMarker);
    await d.db
      .insertInto('settings')
      .values({ key: DEMO_KEY, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();

    const api = d.urls.api;
    const out = {
      guild,
      channels: { general, random, moderators: mods },
      users: { alice, bob },
      bot: bot.bot,
      botToken: bot.token,
      webhookSecret: bot.webhookSecret,
      bobSessionToken: bobSession.token,
      login: { name: alice.name, password },
      inviteUrl: invite.url,
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
        `Log in at ${d.urls.origin}/ as the demo person (owner of "Demo Guild"):`,
        `  name:     ${alice.name}`,
        `  password: ${password}`,
        `Invite others to the guild: ${invite.url}`,
        '',
      ].join('\n'),
    );
  } finally {
    await s.close();
  }
}
