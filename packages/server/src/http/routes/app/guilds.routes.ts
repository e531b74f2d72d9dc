import { Type } from 'typebox';
import {
  AppGuild,
  AppOverwriteBody,
  BanList,
  Channel,
  CreateAppChannelBody,
  CreateAppGuildBody,
  CreateAppRoleBody,
  MemberRoles,
  MemberRolesBody,
  Overwrite,
  PatchChannelBody,
  PatchGuildBody,
  PatchRoleBody,
  Role,
} from '@parley/protocol';
import {
  createAppChannel,
  deleteAppChannel,
  patchAppChannel,
  putAppOverwrite,
} from '../../../domain/channels/app-channels.service.js';
import {
  createAppGuild,
  deleteGuild,
  getAppGuild,
  renameGuild,
} from '../../../domain/guilds/app-guilds.service.js';
import {
  createAppRole,
  deleteRole,
  patchRole,
  setMemberRoles,
} from '../../../domain/guilds/roles.service.js';
import {
  banUser,
  kickMember,
  listBans,
  moderateMessage,
  unbanUser,
} from '../../../domain/moderation/moderation.service.js';
import type { ApiPlugin } from '../../app.js';
import { principalOf } from '../../plugins/auth.js';
import { NoContent, params, responses } from '../../schemas.js';

/**
 * D49: guilds for people. Reading a guild needs membership; every change needs ADMINISTRATOR
 * (the owner always has it); deleting the guild is the owner's alone.
 */
export const guildRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const tags = ['app'];
  const id = (v: string): number => Number(v);

  app.post(
    '/guilds',
    {
      schema: {
        tags,
        summary: 'Create a guild: the caller owns it; it starts with a text channel "general"',
        body: CreateAppGuildBody,
        response: responses({ 201: AppGuild }),
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createAppGuild(d, principalOf(req), req.body.name)),
  );

  app.get(
    '/guilds/:guildId',
    {
      schema: {
        tags,
        summary: 'A guild as the caller sees it (members only)',
        params: params('guildId'),
        response: responses({ 200: AppGuild }),
      },
    },
    async (req) => getAppGuild(d, principalOf(req), id(req.params.guildId)),
  );

  app.patch(
    '/guilds/:guildId',
    {
      schema: {
        tags,
        summary: 'Rename the guild (ADMINISTRATOR); GUILD_UPDATE',
        params: params('guildId'),
        body: PatchGuildBody,
        response: responses({ 200: AppGuild }),
      },
    },
    async (req) => renameGuild(d, principalOf(req), id(req.params.guildId), req.body.name),
  );

  app.delete(
    '/guilds/:guildId',
    {
      schema: {
        tags,
        summary: 'Delete the guild and everything in it (the owner only)',
        params: params('guildId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteGuild(d, principalOf(req), id(req.params.guildId));
      return reply.code(204).send(null);
    },
  );

  // Channels.
  app.post(
    '/guilds/:guildId/channels',
    {
      schema: {
        tags,
        summary: 'Create a text channel (ADMINISTRATOR); CHANNEL_CREATE',
        params: params('guildId'),
        body: CreateAppChannelBody,
        response: responses({ 201: Channel }),
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await createAppChannel(d, principalOf(req), id(req.params.guildId), req.body)),
  );

  app.patch(
    '/channels/:channelId',
    {
      schema: {
        tags,
        summary: "Change a channel's name or topic (ADMINISTRATOR); CHANNEL_UPDATE",
        params: params('channelId'),
        body: PatchChannelBody,
        response: responses({ 200: Channel }),
      },
    },
    async (req) => patchAppChannel(d, principalOf(req), id(req.params.channelId), req.body),
  );

  app.delete(
    '/channels/:channelId',
    {
      schema: {
        tags,
        summary: 'Delete a channel with its messages (ADMINISTRATOR); CHANNEL_DELETE',
        params: params('channelId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteAppChannel(d, principalOf(req), id(req.params.channelId));
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/channels/:channelId/overwrites/:roleId',
    {
      schema: {
        tags,
        summary: "Set a role's overwrite on a channel (ADMINISTRATOR, D11)",
        params: params('channelId', 'roleId'),
        body: AppOverwriteBody,
        response: responses({ 200: Overwrite }),
      },
    },
    async (req) =>
      putAppOverwrite(
        d,
        principalOf(req),
        id(req.params.channelId),
        id(req.params.roleId),
        req.body,
      ),
  );

  app.delete(
    '/channels/:channelId/messages/:messageId',
    {
      schema: {
        tags,
        summary: "Delete anyone's message (ADMINISTRATOR); MESSAGE_DELETE",
        params: params('channelId', 'messageId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await moderateMessage(
        d,
        principalOf(req),
        id(req.params.channelId),
        id(req.params.messageId),
      );
      return reply.code(204).send(null);
    },
  );

  // Roles.
  app.post(
    '/guilds/:guildId/roles',
    {
      schema: {
        tags,
        summary: 'Create a role (ADMINISTRATOR); GUILD_ROLES_UPDATE',
        params: params('guildId'),
        body: CreateAppRoleBody,
        response: responses({ 201: Role }),
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await createAppRole(d, principalOf(req), id(req.params.guildId), req.body)),
  );

  app.patch(
    '/roles/:roleId',
    {
      schema: {
        tags,
        summary: 'Change a role (ADMINISTRATOR; @everyone: permissions only)',
        params: params('roleId'),
        body: PatchRoleBody,
        response: responses({ 200: Role }),
      },
    },
    async (req) => patchRole(d, principalOf(req), id(req.params.roleId), req.body),
  );

  app.delete(
    '/roles/:roleId',
    {
      schema: {
        tags,
        summary: 'Delete a role (ADMINISTRATOR; not @everyone): it leaves members and overwrites',
        params: params('roleId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteRole(d, principalOf(req), id(req.params.roleId));
      return reply.code(204).send(null);
    },
  );

  // Members.
  app.put(
    '/guilds/:guildId/members/:userId/roles',
    {
      schema: {
        tags,
        summary: "Set a member's roles (ADMINISTRATOR); GUILD_MEMBER_UPDATE",
        params: params('guildId', 'userId'),
        body: MemberRolesBody,
        response: responses({ 200: MemberRoles }),
      },
    },
    async (req) =>
      setMemberRoles(
        d,
        principalOf(req),
        id(req.params.guildId),
        id(req.params.userId),
        req.body.roles,
      ),
  );

  app.delete(
    '/guilds/:guildId/members/:userId',
    {
      schema: {
        tags,
        summary: 'Kick a member (ADMINISTRATOR; not the owner: 409); GUILD_MEMBER_REMOVE',
        params: params('guildId', 'userId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await kickMember(d, principalOf(req), id(req.params.guildId), id(req.params.userId));
      return reply.code(204).send(null);
    },
  );

  // Bans.
  app.put(
    '/guilds/:guildId/bans/:userId',
    {
      schema: {
        tags,
        summary: 'Ban a user: removes the member and refuses rejoining (ADMINISTRATOR)',
        params: params('guildId', 'userId'),
        body: Type.Object({}, { title: 'BanBody', additionalProperties: false }),
        response: responses({ 204: NoContent }),
      },
      // No body, `{}` or nothing at all (D44); anything else is refused.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req, reply) => {
      await banUser(d, principalOf(req), id(req.params.guildId), id(req.params.userId));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/guilds/:guildId/bans/:userId',
    {
      schema: {
        tags,
        summary: 'Lift a ban (ADMINISTRATOR)',
        params: params('guildId', 'userId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await unbanUser(d, principalOf(req), id(req.params.guildId), id(req.params.userId));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/guilds/:guildId/bans',
    {
      schema: {
        tags,
        summary: "The guild's bans (ADMINISTRATOR)",
        params: params('guildId'),
        response: responses({ 200: BanList }),
      },
    },
    async (req) => ({ bans: await listBans(d, principalOf(req), id(req.params.guildId)) }),
  );
};
