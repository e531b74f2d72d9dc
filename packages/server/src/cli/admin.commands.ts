import { createWriteStream, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Command, Option } from 'commander';
import type { Config } from '../config/config.js';
import type { Services } from '../services.js';
import { CliError, openForCli } from './open.js';
import { printJson, printRecord, printTable } from './output.js';

/**
 * `parley admin …`: every operator route (D41, D52) as a command, over the same domain
 * functions, straight on the database (works while the server runs: SQLite WAL / PostgreSQL).
 * Arguments are checked before the database is opened; the domain code is imported only when a
 * command runs (cli/admin.ops.ts), so the CLI starts fast.
 *
 * Output: lists, reads and stats print a table, `--json` prints JSON for scripts; commands that
 * create something or hand out a secret print JSON. The database opened is named on stderr.
 */
type Ops = typeof import('./admin.ops.js');
const ops = (): Promise<Ops> => import('./admin.ops.js');

/** D4: canonical decimal ids. */
function id(name: string, value: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value) || Number(value) > Number.MAX_SAFE_INTEGER)
    throw new CliError(
      `${name} must be a canonical decimal id (got "${value}")`,
      'VALIDATION_ERROR',
    );
  return Number(value);
}

function int(name: string, value: string): number {
  if (!/^[0-9]{1,15}$/.test(value))
    throw new CliError(
      `${name} must be a non-negative integer (got "${value}")`,
      'VALIDATION_ERROR',
    );
  return Number(value);
}

interface Json {
  json?: boolean;
}
type Row = Record<string, string | number | boolean | null | undefined>;

/** Commands that change nothing (reads), and those whose domain function writes its own entry. */
const READS = new Set(['list', 'get', 'stats', 'deliveries', 'audit-log']);
const AUDITED = new Set([
  'guild rename',
  'guild transfer',
  'guild delete',
  'channel create',
  'channel update',
  'channel delete',
  'role create',
  'role update',
  'role delete',
  'overwrite set',
  'invite create',
  'invite delete',
  'message delete',
]);

/**
 * D60: every CLI change is in the operator's own log, like every /admin/v1 change. Commander
 * hands the command itself as the action's last argument.
 */
async function logChange(s: Services, o: Ops, args: unknown[]): Promise<void> {
  const cmd = args.at(-1);
  if (!(cmd instanceof Command)) return;
  const name = [cmd.parent?.name() === 'admin' ? '' : cmd.parent?.name(), cmd.name()]
    .filter(Boolean)
    .join(' ');
  if (READS.has(cmd.name()) || AUDITED.has(name)) return;
  const ids = args.filter((a): a is string => typeof a === 'string' && /^\d+$/.test(a));
  await o.writeOperatorChange(s.domain.db, s.domain, {
    what: `parley admin ${name}`,
    reason: null,
    guildId: null,
    targetId: ids.length === 0 ? null : Number(ids[0]),
    body: null,
  });
}

export function adminCommands(config: () => Config): Command {
  /**
   * An action: `prepare` checks the arguments (no database yet), `run` does the work with the
   * services and the operations; what it returns is printed as JSON unless it printed itself.
   */
  const act =
    <A extends unknown[], P>(
      prepare: (...args: A) => P,
      run: (s: Services, o: Ops, input: P) => Promise<unknown>,
    ) =>
    async (...args: A): Promise<void> => {
      const input = prepare(...args);
      const [o, s] = await Promise.all([ops(), openForCli(config())]);
      try {
        const out = await run(s, o, input);
        await logChange(s, o, args);
        if (out !== undefined) printJson(out);
      } finally {
        await s.close();
      }
    };
  const json = new Option('--json', 'print JSON (for scripts)');
  const pageOptions = (c: Command): Command =>
    c
      .option('--q <text>', 'name contains this (case-insensitive)')
      .option('--after <id>', 'ids after this one (cursor)')
      .option('--limit <n>', '1–1000 (default 100)')
      .addOption(json);
  const page = (o: { q?: string; after?: string; limit?: string }) => {
    const limit = o.limit === undefined ? 100 : int('limit', o.limit);
    if (limit < 1 || limit > 1000)
      throw new CliError(`limit must be 1–1000 (got ${limit})`, 'VALIDATION_ERROR');
    return { q: o.q, after: o.after === undefined ? undefined : int('after', o.after), limit };
  };
  /** A list: table (with the cursor for the next page) or JSON. */
  const show = <T>(
    res: { items: T[]; hasMore: boolean },
    o: Json,
    row: (t: T) => Row,
    lastId: (t: T) => number,
  ): undefined => {
    if (o.json) printJson(res);
    else {
      printTable(res.items.map(row));
      const last = res.items.at(-1);
      if (res.hasMore && last !== undefined)
        process.stdout.write(`… more: --after ${lastId(last)}\n`);
    }
    return undefined;
  };
  const one = (v: object, o: Json): undefined => {
    if (o.json) printJson(v);
    else printRecord(v as Record<string, unknown>);
    return undefined;
  };
  const done = (what: string) => (): undefined => {
    process.stdout.write(`${what}\n`);
    return undefined;
  };

  const admin = new Command('admin').description(
    'operator commands (the same operations as /admin/v1)',
  );

  // Users (people and bot users).
  const user = admin.command('user').description('people (and bot users)');
  pageOptions(user.command('list').description('users by id; --q filters by name')).action(
    act(
      (o: { q?: string; after?: string; limit?: string } & Json) => ({ o, p: page(o) }),
      async (s, ops, { o, p }) =>
        show(
          await ops.listUsers(s.domain, p),
          o,
          (u) => ({
            id: u.id,
            name: u.name,
            bot: u.isBot,
            disabled: u.disabled,
            created: u.createdAt,
          }),
          (u) => u.id,
        ),
    ),
  );
  user
    .command('get <userId>')
    .addOption(json)
    .action(
      act(
        (userId: string, o: Json) => ({ userId: id('userId', userId), o }),
        async (s, ops, i) => one(await ops.getUser(s.domain, ops.operator(), i.userId), i.o),
      ),
    );
  user
    .command('create')
    .requiredOption('--name <name>')
    .option('--password <password>')
    .option('--avatar <url>')
    .action(
      act(
        (o: { name: string; password?: string; avatar?: string }) => o,
        (s, ops, o) => ops.createUser(s.domain, ops.check(ops.schemas.CreateUserBody, { ...o })),
      ),
    );
  user
    .command('update <userId>')
    .description('change name, password or avatar (a new password ends every session)')
    .option('--name <name>')
    .option('--password <password>')
    .option('--avatar <url>', 'an http(s) URL, or "none" for the default')
    .addOption(json)
    .action(
      act(
        (userId: string, o: { name?: string; password?: string; avatar?: string } & Json) => ({
          userId: id('userId', userId),
          o,
        }),
        async (s, ops, { userId, o }) => {
          const { json: j, avatar, ...rest } = o;
          const body = {
            ...rest,
            ...(avatar === undefined ? {} : { avatar: avatar === 'none' ? null : avatar }),
          };
          return one(
            await ops.updateUser(s.domain, userId, ops.check(ops.schemas.AdminUserPatch, body)),
            { json: j ?? false },
          );
        },
      ),
    );
  for (const [name, disabled, what] of [
    ['disable', true, 'disabled: sessions ended, connections closed, login refused'],
    ['enable', false, 'enabled'],
  ] as const)
    user
      .command(`${name} <userId>`)
      .description(disabled ? 'end their sessions and refuse logins (D52)' : 'allow logins again')
      .action(
        act(
          (userId: string) => id('userId', userId),
          async (s, ops, userId) => {
            await ops.updateUser(s.domain, userId, { disabled });
            return done(`user ${userId} ${what}`)();
          },
        ),
      );
  user
    .command('delete <userId>')
    .description('delete a person and what hangs on them (owned guilds and bots, messages)')
    .action(
      act(
        (userId: string) => id('userId', userId),
        async (s, ops, userId) => {
          await ops.deleteUser(s.domain, userId);
          return done(`user ${userId} deleted`)();
        },
      ),
    );
  user
    .command('sessions-end <userId>')
    .description('end every session of the person')
    .action(
      act(
        (userId: string) => id('userId', userId),
        async (s, ops, userId) => {
          await ops.endUserSessions(s.domain, userId);
          return done(`sessions of user ${userId} ended`)();
        },
      ),
    );
  user
    .command('session <userId>')
    .description('print a new session token for the person')
    .action(
      act(
        (userId: string) => id('userId', userId),
        (s, ops, userId) => ops.createSession(s.domain, userId),
      ),
    );

  // Guilds.
  const guild = admin.command('guild').description('guilds');
  pageOptions(guild.command('list').description('guilds by id; --q filters by name')).action(
    act(
      (o: { q?: string; after?: string; limit?: string } & Json) => ({ o, p: page(o) }),
      async (s, ops, { o, p }) =>
        show(
          await ops.listGuilds(s.domain, p),
          o,
          (g) => ({
            id: g.id,
            name: g.name,
            owner: g.ownerId,
            members: g.memberCount,
            created: g.createdAt,
          }),
          (g) => g.id,
        ),
    ),
  );
  guild
    .command('get <guildId>')
    .addOption(json)
    .action(
      act(
        (guildId: string, o: Json) => ({ guildId: id('guildId', guildId), o }),
        async (s, ops, i) => one(await ops.getGuild(s.domain, i.guildId), i.o),
      ),
    );
  guild
    .command('create')
    .requiredOption('--name <name>')
    .requiredOption('--owner <userId>')
    .action(
      act(
        (o: { name: string; owner: string }) => ({ name: o.name, ownerId: id('owner', o.owner) }),
        (s, ops, body) => ops.createGuild(s.domain, ops.check(ops.schemas.CreateGuildBody, body)),
      ),
    );
  guild
    .command('rename <guildId> <name>')
    .addOption(json)
    .action(
      act(
        (guildId: string, name: string, o: Json) => ({ guildId: id('guildId', guildId), name, o }),
        async (s, ops, i) =>
          one(
            await ops.updateGuild(
              s.domain,
              i.guildId,
              ops.check(ops.schemas.AdminGuildPatch, { name: i.name }),
            ),
            i.o,
          ),
      ),
    );
  guild
    .command('transfer <guildId> <userId>')
    .description('give the guild to another member')
    .addOption(json)
    .action(
      act(
        (guildId: string, userId: string, o: Json) => ({
          guildId: id('guildId', guildId),
          ownerId: id('userId', userId),
          o,
        }),
        async (s, ops, i) =>
          one(await ops.updateGuild(s.domain, i.guildId, { ownerId: i.ownerId }), i.o),
      ),
    );
  guild
    .command('export <guildId>')
    .description(
      'a zip of the guild: channels, roles, members and every message (the format of a person’s export)',
    )
    .option('--out <file>', 'where to write it (default: guild-<id>-export.zip)')
    .action(
      act(
        (guildId: string, o: { out?: string }) => {
          const gid = id('guildId', guildId);
          const out = path.resolve(o.out ?? `guild-${gid}-export.zip`);
          if (existsSync(out)) throw new CliError(`${out} exists; choose a new file name`);
          return { guildId: gid, out };
        },
        async (s, ops, i) => {
          const zip = await ops.exportGuild(s.domain, i.guildId);
          const tmp = `${i.out}.${process.pid}.tmp`;
          try {
            await pipeline(zip, createWriteStream(tmp, { mode: 0o600 }));
            renameSync(tmp, i.out);
          } finally {
            rmSync(tmp, { force: true });
          }
          return done(`guild ${i.guildId} exported to ${i.out} (${statSync(i.out).size} bytes)`)();
        },
      ),
    );
  guild
    .command('delete <guildId>')
    .description('delete the guild and everything in it (its bots get GUILD_MEMBER_REMOVE)')
    .action(
      act(
        (guildId: string) => id('guildId', guildId),
        async (s, ops, guildId) => {
          await ops.deleteGuild(s.domain, guildId);
          return done(`guild ${guildId} deleted`)();
        },
      ),
    );

  // Channels.
  const channel = admin.command('channel').description('guild channels');
  channel
    .command('create <guildId>')
    .requiredOption('--name <name>')
    .option('--topic <topic>')
    .action(
      act(
        (guildId: string, o: { name: string; topic?: string }) => ({
          guildId: id('guildId', guildId),
          o,
        }),
        (s, ops, i) =>
          ops.createChannel(
            s.domain,
            i.guildId,
            ops.check(ops.schemas.CreateChannelBody, { ...i.o }),
          ),
      ),
    );
  channel
    .command('get <channelId>')
    .addOption(json)
    .action(
      act(
        (channelId: string, o: Json) => ({ channelId: id('channelId', channelId), o }),
        async (s, ops, i) => one(await ops.getChannel(s.domain, i.channelId), i.o),
      ),
    );
  channel
    .command('update <channelId>')
    .option('--name <name>')
    .option('--topic <topic>')
    .addOption(json)
    .action(
      act(
        (channelId: string, o: { name?: string; topic?: string } & Json) => ({
          channelId: id('channelId', channelId),
          o,
        }),
        async (s, ops, { channelId, o }) => {
          const { json: j, ...body } = o;
          return one(
            await ops.updateChannel(
              s.domain,
              channelId,
              ops.check(ops.schemas.AdminChannelPatch, body),
            ),
            { json: j ?? false },
          );
        },
      ),
    );
  channel
    .command('delete <channelId>')
    .description('delete the channel and its messages')
    .action(
      act(
        (channelId: string) => id('channelId', channelId),
        async (s, ops, channelId) => {
          await ops.deleteChannel(s.domain, channelId);
          return done(`channel ${channelId} deleted`)();
        },
      ),
    );

  // Roles.
  const role = admin.command('role').description('guild roles');
  role
    .command('create <guildId>')
    .requiredOption('--name <name>')
    .requiredOption(
      '--permissions <bits>',
      'VIEW_CHANNEL 1, SEND_MESSAGES 2, READ_MESSAGE_HISTORY 4, ADMINISTRATOR 8',
    )
    .action(
      act(
        (guildId: string, o: { name: string; permissions: string }) => ({
          guildId: id('guildId', guildId),
          body: { name: o.name, permissions: int('permissions', o.permissions) },
        }),
        (s, ops, i) =>
          ops.createRole(s.domain, i.guildId, ops.check(ops.schemas.CreateRoleBody, i.body)),
      ),
    );
  role
    .command('get <roleId>')
    .addOption(json)
    .action(
      act(
        (roleId: string, o: Json) => ({ roleId: id('roleId', roleId), o }),
        async (s, ops, i) => one(await ops.getRole(s.domain, i.roleId), i.o),
      ),
    );
  role
    .command('update <roleId>')
    .option('--name <name>')
    .option('--permissions <bits>')
    .addOption(json)
    .action(
      act(
        (roleId: string, o: { name?: string; permissions?: string } & Json) => ({
          roleId: id('roleId', roleId),
          body: {
            ...(o.name === undefined ? {} : { name: o.name }),
            ...(o.permissions === undefined
              ? {}
              : { permissions: int('permissions', o.permissions) }),
          },
          o,
        }),
        async (s, ops, i) =>
          one(
            await ops.updateRole(s.domain, i.roleId, ops.check(ops.schemas.AdminRolePatch, i.body)),
            i.o,
          ),
      ),
    );
  role
    .command('delete <roleId>')
    .description('delete a role (not @everyone)')
    .action(
      act(
        (roleId: string) => id('roleId', roleId),
        async (s, ops, roleId) => {
          await ops.deleteRole(s.domain, roleId);
          return done(`role ${roleId} deleted`)();
        },
      ),
    );

  // Members and overwrites (D41).
  const member = admin.command('member').description('guild membership');
  member
    .command('add <guildId> <userId>')
    .option('--roles <ids>', 'comma-separated role ids')
    .action(
      act(
        (guildId: string, userId: string, o: { roles?: string }) => ({
          guildId: id('guildId', guildId),
          userId: id('userId', userId),
          roles:
            o.roles === undefined
              ? undefined
              : o.roles
                  .split(',')
                  .filter(Boolean)
                  .map((r) => id('roles', r.trim())),
        }),
        async (s, ops, i) =>
          (await ops.putMember(s.domain, i.guildId, i.userId, i.roles ? { roles: i.roles } : {}))
            .member,
      ),
    );
  member.command('remove <guildId> <userId>').action(
    act(
      (guildId: string, userId: string) => ({
        guildId: id('guildId', guildId),
        userId: id('userId', userId),
      }),
      (s, ops, i) => ops.removeMember(s.domain, i.guildId, i.userId),
    ),
  );
  admin
    .command('overwrite')
    .description('channel permission overwrites')
    .command('set <channelId> <roleId>')
    .requiredOption('--allow <bits>')
    .requiredOption('--deny <bits>')
    .action(
      act(
        (channelId: string, roleId: string, o: { allow: string; deny: string }) => ({
          channelId: id('channelId', channelId),
          roleId: id('roleId', roleId),
          body: { allow: int('allow', o.allow), deny: int('deny', o.deny) },
        }),
        (s, ops, i) =>
          ops.setOverwrite(
            s.domain,
            i.channelId,
            i.roleId,
            ops.check(ops.schemas.OverwriteBody, i.body),
          ),
      ),
    );

  // Invites (D49, D52).
  const invite = admin.command('invite').description('guild invites');
  invite
    .command('create <guildId>')
    .option('--max-uses <n>', 'uses before it stops working (default unlimited)')
    .option('--expires-in <seconds>', 'lifetime in seconds (default never)')
    .action(
      act(
        (guildId: string, o: { maxUses?: string; expiresIn?: string }) => ({
          guildId: id('guildId', guildId),
          body: {
            ...(o.maxUses === undefined ? {} : { maxUses: int('max-uses', o.maxUses) }),
            ...(o.expiresIn === undefined ? {} : { expiresInS: int('expires-in', o.expiresIn) }),
          },
        }),
        (s, ops, i) =>
          ops.createInvite(s.domain, i.guildId, ops.check(ops.schemas.CreateInviteBody, i.body)),
      ),
    );
  invite
    .command('list <guildId>')
    .addOption(json)
    .action(
      act(
        (guildId: string, o: Json) => ({ guildId: id('guildId', guildId), o }),
        async (s, ops, i) => {
          const res = await ops.listInvites(s.domain, i.guildId);
          if (i.o.json) return res;
          printTable(
            res.invites.map((v) => ({
              code: v.code,
              uses: v.uses,
              max: v.maxUses,
              expires: v.expiresAt,
              url: v.url,
            })),
          );
          return undefined;
        },
      ),
    );
  invite
    .command('get <code>')
    .addOption(json)
    .action(
      act(
        (code: string, o: Json) => ({ code, o }),
        async (s, ops, i) => one(await ops.getInvite(s.domain, i.code), i.o),
      ),
    );
  invite.command('delete <code>').action(
    act(
      (code: string) => code,
      async (s, ops, code) => {
        await ops.deleteInvite(s.domain, code);
        return done(`invite ${code} deleted`)();
      },
    ),
  );

  // Messages.
  admin
    .command('message')
    .description('messages')
    .command('delete <channelId> <messageId>')
    .description('delete any message (bots get MESSAGE_DELETE, D34)')
    .action(
      act(
        (channelId: string, messageId: string) => ({
          channelId: id('channelId', channelId),
          messageId: id('messageId', messageId),
        }),
        async (s, ops, i) => {
          await ops.deleteAnyMessage(s.domain, i.channelId, i.messageId);
          return done(`message ${i.messageId} deleted`)();
        },
      ),
    );

  // Bots.
  const bot = admin.command('bot').description('bots');
  pageOptions(bot.command('list').description('bots by id; --q filters by name')).action(
    act(
      (o: { q?: string; after?: string; limit?: string } & Json) => ({ o, p: page(o) }),
      async (s, ops, { o, p }) =>
        show(
          await ops.listBots(s.domain, p),
          o,
          (b) => ({
            id: b.id,
            name: b.name,
            owner: b.ownerId,
            user: b.botUser.id,
            webhook: b.webhookUrl,
          }),
          (b) => b.id,
        ),
    ),
  );
  bot
    .command('get <botId>')
    .addOption(json)
    .action(
      act(
        (botId: string, o: Json) => ({ botId: id('botId', botId), o }),
        async (s, ops, i) => one(await ops.getAdminBot(s.domain, i.botId), i.o),
      ),
    );
  bot
    .command('create')
    .requiredOption('--owner <userId>')
    .requiredOption('--name <name>')
    .option('--description <text>')
    .option('--avatar <url>')
    .action(
      act(
        (o: { owner: string; name: string; description?: string; avatar?: string }) => {
          const { owner, ...rest } = o;
          return { ownerId: id('owner', owner), ...rest };
        },
        (s, ops, body) =>
          ops.createBot(s.domain, s.codec, ops.check(ops.schemas.CreateBotBody, body)),
      ),
    );
  bot
    .command('update <botId>')
    .option('--name <name>')
    .option('--description <text>')
    .option('--avatar <url>', 'an http(s) URL, or "none" for the default')
    .addOption(json)
    .action(
      act(
        (botId: string, o: { name?: string; description?: string; avatar?: string } & Json) => ({
          botId: id('botId', botId),
          o,
        }),
        async (s, ops, { botId, o }) => {
          const { json: j, avatar, ...rest } = o;
          const body = {
            ...rest,
            ...(avatar === undefined ? {} : { avatar: avatar === 'none' ? null : avatar }),
          };
          return one(
            await ops.updateBot(s.domain, botId, ops.check(ops.schemas.AdminBotPatch, body)),
            { json: j ?? false },
          );
        },
      ),
    );
  bot
    .command('delete <botId>')
    .description('its token dies, its connection closes 4004, it leaves every guild (D50)')
    .action(
      act(
        (botId: string) => id('botId', botId),
        async (s, ops, botId) => {
          await ops.deleteBot(s.domain, botId);
          return done(`bot ${botId} deleted`)();
        },
      ),
    );
  bot
    .command('reset-token <botId>')
    .description('issue a new token; the old one is refused from the next request (D8)')
    .action(
      act(
        (botId: string) => id('botId', botId),
        (s, ops, botId) => ops.resetBotToken(s.domain, s.codec, botId),
      ),
    );

  // D37–D41. Deliveries are rows: a running server's worker sends what these commands enqueue.
  const webhook = admin.command('webhook').description('webhook address, secret and deliveries');
  const byBot = (
    name: string,
    description: string,
    fn: (s: Services, o: Ops, botId: number) => Promise<unknown>,
  ): void => {
    webhook
      .command(`${name} <botId>`)
      .description(description)
      .action(act((botId: string) => id('botId', botId), fn));
  };
  webhook
    .command('set <botId> <url>')
    .description('set the address (checked as D37 says); prints it with the signing secret')
    .action(
      act(
        (botId: string, url: string) => ({ botId: id('botId', botId), url }),
        (s, ops, i) => ops.setWebhook(s.domain, i.botId, i.url),
      ),
    );
  byBot('delete', 'remove the address', (s, o, b) => o.deleteWebhook(s.domain, b));
  byBot('rotate-secret', 'a new signing secret, in effect from the next try', (s, o, b) =>
    o.rotateWebhookSecret(s.domain, b),
  );
  byBot('test', 'enqueue a WEBHOOK_TEST event', (s, o, b) => o.sendTestEvent(s.domain, b));
  byBot('deliveries', 'recent deliveries, newest first', (s, o, b) =>
    o.listDeliveries(s.domain, b),
  );
  webhook
    .command('redeliver <botId> <deliveryId>')
    .description('try a delivery again now (same X-Service-Delivery)')
    .action(
      act(
        (botId: string, d: string) => ({ botId: id('botId', botId), d: id('deliveryId', d) }),
        (s, ops, i) => ops.redeliver(s.domain, i.botId, i.d),
      ),
    );

  admin
    .command('stats')
    .description('counts: users, guilds, messages, connections, webhook backlog')
    .addOption(json)
    .action(
      act(
        (o: Json) => o,
        async (s, ops, o) => {
          // The CLI holds no gateway connection: people's connections live in the servers.
          const st = await ops.stats(s.domain, 0);
          if (o.json) return st;
          const { connections, ...rest } = st;
          return one({ ...rest, 'connections.bots': connections.bots }, o);
        },
      ),
    );

  // D60: the operator reads any guild's audit log, and its own.
  admin
    .command('audit-log')
    // Issue 28 asked for `parley admin audit`: the same command, one way of doing it.
    .alias('audit')
    .description("the operator's own log (every /admin/v1 and CLI change), or --guild's log")
    .option('--guild <guildId>', "a guild's audit log instead")
    .option('--action <action>', 'only this action (e.g. MEMBER_KICK)')
    .option('--before <id>', 'entries before this one (cursor)')
    .option('--limit <n>', '1–100 (default 50)')
    .addOption(json)
    .action(
      act(
        (o: { guild?: string; action?: string; before?: string; limit?: string } & Json) => {
          const limit = o.limit === undefined ? 50 : int('limit', o.limit);
          if (limit < 1 || limit > 100)
            throw new CliError(`limit must be 1–100 (got ${limit})`, 'VALIDATION_ERROR');
          return {
            guildId: o.guild === undefined ? undefined : id('guild', o.guild),
            q: {
              limit,
              action: o.action,
              before: o.before === undefined ? undefined : id('before', o.before),
            },
            o,
          };
        },
        async (s, ops, i) => {
          const log =
            i.guildId === undefined
              ? await ops.operatorAuditLog(s.domain, i.q)
              : await ops.guildAuditLog(s.domain, ops.operator(), i.guildId, i.q);
          if (i.o.json) return log;
          printTable(
            log.entries.map((e) => ({
              id: e.id,
              createdAt: e.createdAt,
              actor: e.actorType === 'operator' ? 'operator' : `${e.actorType} ${e.actorId}`,
              action: e.action,
              targetId: e.targetId,
              reason: e.reason,
            })),
          );
          const last = log.entries.at(-1);
          if (log.hasMore && last !== undefined)
            process.stdout.write(`… more: --before ${last.id}\n`);
          return undefined;
        },
      ),
    );

  return admin;
}
