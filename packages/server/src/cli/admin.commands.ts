import { Command } from 'commander';
import type { TSchema } from 'typebox';
import {
  CreateBotBody,
  CreateChannelBody,
  CreateGuildBody,
  CreateRoleBody,
  CreateUserBody,
  OverwriteBody,
  isIdText,
} from '@parley/protocol';
import type { Config } from '../config/config.js';
import { createBot, resetBotToken } from '../domain/bots/bots.service.js';
import { createChannel, setOverwrite } from '../domain/channels/channels.service.js';
import { createGuild, createRole } from '../domain/guilds/guilds.service.js';
import { putMember, removeMember } from '../domain/members/members.service.js';
import { createSession, createUser } from '../domain/users/users.service.js';
import { AppError } from '../errors/app-error.js';
import { makeAjv } from '../validation/ajv.js';
import { openServices, type Services } from '../services.js';
import {
  deleteWebhook,
  listDeliveries,
  redeliver,
  rotateWebhookSecret,
  sendTestEvent,
  setWebhook,
} from '../webhooks/webhooks.service.js';

/**
 * `parley admin …`: the operator API's operations (D41) over the same domain functions, straight
 * on the database (works while the server runs: SQLite WAL / PostgreSQL). Prints JSON.
 */
const ajv = makeAjv({ coerceTypes: false });

function check<T>(schema: TSchema, value: unknown): T {
  const validate = ajv.compile(schema);
  if (!validate(value)) {
    const e = validate.errors?.[0];
    const field =
      (e?.instancePath ?? '').replace(/^\//, '') ||
      String(e?.params?.['missingProperty'] ?? 'input');
    throw new AppError('VALIDATION_ERROR', `${field} ${e?.message ?? 'is invalid'}`);
  }
  return value as T;
}

function id(name: string, value: string): number {
  if (!isIdText(value))
    throw new AppError(
      'VALIDATION_ERROR',
      `${name} must be a canonical decimal id (got "${value}")`,
    );
  return Number(value);
}

function int(name: string, value: string): number {
  if (!/^[0-9]+$/.test(value))
    throw new AppError(
      'VALIDATION_ERROR',
      `${name} must be a non-negative integer (got "${value}")`,
    );
  return Number(value);
}

const print = (v: unknown): void => {
  process.stdout.write(JSON.stringify(v, null, 2) + '\n');
};

export function adminCommands(config: () => Config): Command {
  const run =
    <A extends unknown[]>(fn: (s: Services, ...args: A) => Promise<unknown>) =>
    async (...args: A): Promise<void> => {
      const s = await openServices(config());
      try {
        const out = await fn(s, ...args);
        if (out !== undefined) print(out);
      } finally {
        await s.close();
      }
    };

  const admin = new Command('admin').description(
    'operator commands (same operations as /admin/v1)',
  );

  const user = admin.command('user').description('human users');
  user
    .command('create')
    .requiredOption('--name <name>')
    .option('--password <password>')
    .option('--avatar <url>')
    .action(
      run((s, o: { name: string; password?: string; avatar?: string }) =>
        createUser(s.domain, check(CreateUserBody, { ...o })),
      ),
    );
  user
    .command('session <userId>')
    .description('print a session token for the user')
    .action(
      run(async (s, userId: string) => ({
        token: (await createSession(s.domain, id('userId', userId))).token,
      })),
    );

  admin
    .command('guild')
    .command('create')
    .requiredOption('--name <name>')
    .requiredOption('--owner <userId>')
    .action(
      run((s, o: { name: string; owner: string }) =>
        createGuild(
          s.domain,
          check(CreateGuildBody, { name: o.name, ownerId: id('owner', o.owner) }),
        ),
      ),
    );

  admin
    .command('channel')
    .command('create <guildId>')
    .requiredOption('--name <name>')
    .option('--topic <topic>')
    .action(
      run((s, guildId: string, o: { name: string; topic?: string }) =>
        createChannel(s.domain, id('guildId', guildId), check(CreateChannelBody, { ...o })),
      ),
    );

  const overwrite = admin.command('overwrite').description('channel permission overwrites');
  overwrite
    .command('set <channelId> <roleId>')
    .requiredOption('--allow <bits>')
    .requiredOption('--deny <bits>')
    .action(
      run((s, channelId: string, roleId: string, o: { allow: string; deny: string }) =>
        setOverwrite(
          s.domain,
          id('channelId', channelId),
          id('roleId', roleId),
          check(OverwriteBody, { allow: int('allow', o.allow), deny: int('deny', o.deny) }),
        ),
      ),
    );

  admin
    .command('role')
    .command('create <guildId>')
    .requiredOption('--name <name>')
    .requiredOption(
      '--permissions <bits>',
      'VIEW_CHANNEL 1, SEND_MESSAGES 2, READ_MESSAGE_HISTORY 4, ADMINISTRATOR 8',
    )
    .action(
      run((s, guildId: string, o: { name: string; permissions: string }) =>
        createRole(
          s.domain,
          id('guildId', guildId),
          check(CreateRoleBody, { name: o.name, permissions: int('permissions', o.permissions) }),
        ),
      ),
    );

  const member = admin.command('member').description('guild membership');
  member
    .command('add <guildId> <userId>')
    .option('--roles <ids>', 'comma-separated role ids')
    .action(
      run(async (s, guildId: string, userId: string, o: { roles?: string }) => {
        const roles =
          o.roles === undefined
            ? undefined
            : o.roles
                .split(',')
                .filter(Boolean)
                .map((r) => id('roles', r.trim()));
        return (
          await putMember(
            s.domain,
            id('guildId', guildId),
            id('userId', userId),
            roles ? { roles } : {},
          )
        ).member;
      }),
    );
  member
    .command('remove <guildId> <userId>')
    .action(
      run(async (s, guildId: string, userId: string) =>
        removeMember(s.domain, id('guildId', guildId), id('userId', userId)),
      ),
    );

  const bot = admin.command('bot').description('bots');
  bot
    .command('create')
    .requiredOption('--owner <userId>')
    .requiredOption('--name <name>')
    .option('--description <text>')
    .option('--avatar <url>')
    .action(
      run((s, o: { owner: string; name: string; description?: string; avatar?: string }) => {
        const { owner, ...rest } = o;
        return createBot(
          s.domain,
          s.codec,
          check(CreateBotBody, { ownerId: id('owner', owner), ...rest }),
        );
      }),
    );
  bot
    .command('reset-token <botId>')
    .description('issue a new token; the old one is refused from the next request (D8)')
    .action(run((s, botId: string) => resetBotToken(s.domain, s.codec, id('botId', botId))));

  // D37–D41. Deliveries are rows: a running server's worker sends what these commands enqueue.
  const webhook = admin.command('webhook').description('webhook address, secret and deliveries');
  webhook
    .command('set <botId> <url>')
    .description('set the address (checked as D37 says); prints it with the signing secret')
    .action(run((s, botId: string, url: string) => setWebhook(s.domain, id('botId', botId), url)));
  webhook
    .command('delete <botId>')
    .action(run((s, botId: string) => deleteWebhook(s.domain, id('botId', botId))));
  webhook
    .command('rotate-secret <botId>')
    .description('a new signing secret, in effect from the next try')
    .action(run((s, botId: string) => rotateWebhookSecret(s.domain, id('botId', botId))));
  webhook
    .command('test <botId>')
    .description('enqueue a WEBHOOK_TEST event')
    .action(run((s, botId: string) => sendTestEvent(s.domain, id('botId', botId))));
  webhook
    .command('deliveries <botId>')
    .description('recent deliveries, newest first')
    .action(run((s, botId: string) => listDeliveries(s.domain, id('botId', botId))));
  webhook
    .command('redeliver <botId> <deliveryId>')
    .description('try a delivery again now (same X-Service-Delivery)')
    .action(
      run((s, botId: string, d: string) =>
        redeliver(s.domain, id('botId', botId), id('deliveryId', d)),
      ),
    );

  return admin;
}
