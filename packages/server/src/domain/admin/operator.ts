import type {
  AdminChannelPatch,
  AdminGuildDetail,
  AdminGuildPatch,
  AdminRole,
  AdminRolePatch,
  Channel,
  CreateChannelBody,
  CreateInviteBody,
  CreateRoleBody,
  Invite,
  Overwrite,
  OverwriteBody,
  Role,
} from '@parley/protocol';
import {
  createChannel,
  deleteChannel,
  patchChannel,
  putOverwrite,
} from '../channels/app-channels.service.js';
import type { Domain } from '../context.js';
import { operator } from '../guilds/actor.js';
import { deleteGuild, updateGuild } from '../guilds/app-guilds.service.js';
import { getGuild, getRole } from '../guilds/guilds.admin.js';
import { createRole, deleteRole, patchRole } from '../guilds/roles.service.js';
import { createInvite, deleteInvite } from '../invites/invites.service.js';
import { deleteGuildMessage } from '../moderation/moderation.service.js';
import { deleteMessage } from './purge.js';

/**
 * D52/D59: the operator's guild changes, for /admin/v1 and the CLI alike — each the one domain
 * function of its action with the operator as actor (who passes every check explicitly and is
 * written in the guild's audit log and the operator's own, D60), answered in the operator's
 * shapes. `reason`: the request's X-Audit-Log-Reason (the CLI has none).
 */
type Reason = string | null;

export async function operatorUpdateGuild(
  d: Domain,
  guildId: number,
  body: AdminGuildPatch,
  reason: Reason = null,
): Promise<AdminGuildDetail> {
  await updateGuild(d, operator(reason), guildId, body);
  return getGuild(d, guildId);
}

export const operatorDeleteGuild = (d: Domain, guildId: number, reason: Reason = null) =>
  deleteGuild(d, operator(reason), guildId);

export const operatorCreateRole = (
  d: Domain,
  guildId: number,
  body: CreateRoleBody,
  reason: Reason = null,
): Promise<Role> =>
  createRole(d, operator(reason), guildId, { name: body.name, permissions: body.permissions });

export async function operatorUpdateRole(
  d: Domain,
  roleId: number,
  body: AdminRolePatch,
  reason: Reason = null,
): Promise<AdminRole> {
  await patchRole(d, operator(reason), roleId, body);
  return getRole(d, roleId);
}

export const operatorDeleteRole = (d: Domain, roleId: number, reason: Reason = null) =>
  deleteRole(d, operator(reason), roleId);

export const operatorCreateChannel = (
  d: Domain,
  guildId: number,
  body: CreateChannelBody,
  reason: Reason = null,
): Promise<Channel> =>
  createChannel(d, operator(reason), guildId, {
    name: body.name,
    ...(body.topic === undefined ? {} : { topic: body.topic }),
    ...(body.type === undefined ? {} : { type: body.type }),
  });

export const operatorUpdateChannel = (
  d: Domain,
  channelId: number,
  body: AdminChannelPatch,
  reason: Reason = null,
): Promise<Channel> => patchChannel(d, operator(reason), channelId, body);

export const operatorDeleteChannel = (d: Domain, channelId: number, reason: Reason = null) =>
  deleteChannel(d, operator(reason), channelId);

export const operatorSetOverwrite = (
  d: Domain,
  channelId: number,
  roleId: number,
  body: OverwriteBody,
  reason: Reason = null,
): Promise<Overwrite> =>
  putOverwrite(d, operator(reason), channelId, roleId, { allow: body.allow, deny: body.deny });

/** Any message; a DM's too (D52: no guild log holds it — the operator's own log does). */
export async function operatorDeleteMessage(
  d: Domain,
  channelId: number,
  messageId: number,
  reason: Reason = null,
): Promise<void> {
  const ch = await d.db
    .selectFrom('channels')
    .select('guild_id')
    .where('id', '=', channelId)
    .executeTakeFirst();
  if (ch && ch.guild_id === null) return deleteMessage(d, channelId, messageId);
  return deleteGuildMessage(d, operator(reason), channelId, messageId);
}

export const operatorCreateInvite = (
  d: Domain,
  guildId: number,
  body: CreateInviteBody,
  reason: Reason = null,
): Promise<Invite> => createInvite(d, operator(reason), guildId, body);

export const operatorDeleteInvite = (d: Domain, code: string, reason: Reason = null) =>
  deleteInvite(d, operator(reason), code);
