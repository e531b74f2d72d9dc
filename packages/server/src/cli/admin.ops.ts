import type { TSchema } from 'typebox';
import { isIdText } from '@parley/protocol';
import { AppError } from '../errors/app-error.js';
import { makeAjv } from '../validation/ajv.js';

/**
 * Everything `parley admin …` runs, loaded only once a command has been chosen (cli/main.ts
 * stays light so `parley --help` or a typo answers at once): the operator API's operations (D41,
 * D52) over the same domain functions, straight on the database.
 */
export { createBot, resetBotToken } from '../domain/bots/bots.service.js';
export { deleteBot, getAdminBot, listBots, updateBot } from '../domain/bots/bots.admin.js';
export { getChannel } from '../domain/channels/channels.admin.js';
export { createGuild } from '../domain/guilds/guilds.service.js';
export { getGuild, getRole, listGuilds } from '../domain/guilds/guilds.admin.js';
// D59: the operator's guild changes are the one domain function of each action (operator actor).
export {
  operatorCreateChannel as createChannel,
  operatorCreateInvite as createInvite,
  operatorCreateRole as createRole,
  operatorDeleteChannel as deleteChannel,
  operatorDeleteGuild as deleteGuild,
  operatorDeleteInvite as deleteInvite,
  operatorDeleteMessage as deleteAnyMessage,
  operatorDeleteRole as deleteRole,
  operatorSetOverwrite as setOverwrite,
  operatorUpdateChannel as updateChannel,
  operatorUpdateGuild as updateGuild,
  operatorUpdateRole as updateRole,
} from '../domain/admin/operator.js';
export { putMember, removeMember } from '../domain/members/members.service.js';
export { createSession, createUser } from '../domain/users/users.service.js';
export { deleteUser, endUserSessions, listUsers, updateUser } from '../domain/users/users.admin.js';
export { stats } from '../domain/admin/stats.js';
export { exportGuild } from '../domain/export/export.service.js';
export {
  guildAuditLog,
  operatorAuditLog,
  writeOperatorChange,
} from '../domain/audit/audit.service.js';
export { operator } from '../domain/guilds/actor.js';
export { getUser } from '../domain/users/get-user.js';
export { getInvite, listInvites, updateInvite } from '../domain/invites/invites.admin.js';
export {
  deleteWebhook,
  listDeliveries,
  redeliver,
  rotateWebhookSecret,
  sendTestEvent,
  setWebhook,
} from '../webhooks/webhooks.service.js';
export * as schemas from '@parley/protocol';

const ajv = makeAjv({ coerceTypes: false });

/** The route's own body schema checks the CLI's input: one set of rules (D46, D54). */
export function check<T>(schema: TSchema, value: unknown): T {
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

export { isIdText };
