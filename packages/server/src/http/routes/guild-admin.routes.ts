import { Type } from 'typebox';
import {
  AppGuild,
  AppOverwriteBody,
  AuditLog,
  BanList,
  Channel,
  CreateAppChannelBody,
  CreateAppRoleBody,
  CreateInviteBody,
  Invite,
  InviteList,
  MemberRoles,
  MemberRolesBody,
  Overwrite,
  OverwriteList,
  PatchChannelBody,
  PatchGuildBody,
  PatchMemberBody,
  PatchRoleBody,
  ReorderRolesBody,
  Role,
  RoleList,
} from '@parley/protocol';
import { guildAuditLog } from '../../domain/audit/audit.service.js';
import {
  createChannel,
  deleteChannel,
  listOverwrites,
  patchChannel,
  putOverwrite,
} from '../../domain/channels/app-channels.service.js';
import { deleteGuild, getAppGuild, updateGuild } from '../../domain/guilds/app-guilds.service.js';
import { guildView } from '../../domain/guilds/guild-view.js';
import {
  createRole,
  deleteRole,
  listRoles,
  patchRole,
  reorderRoles,
  setMemberRoles,
} from '../../domain/guilds/roles.service.js';
import { createInvite, deleteInvite, listInvites } from '../../domain/invites/invites.service.js';
import {
  banUser,
  kickMember,
  listBans,
  timeoutMember,
  unbanUser,
} from '../../domain/moderation/moderation.service.js';
import { forbidden } from '../../errors/app-error.js';
import type { ApiPlugin } from '../app.js';
import { actorOfRequest } from '../plugins/actor.js';
import { principalOf } from '../plugins/auth.js';
import { CursorParam } from '@parley/protocol';
import { NoContent, num, params, responses } from '../schemas.js';

/** An invite code in a path: what codes are made of (anything else is 400, like a bad id). */
export const CodeParams = Type.Object({
  code: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
});

/** D60: the audit log's page (newest first) and its filters. */
export const AuditQuery = Type.Object({
  before: Type.Optional(CursorParam),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  action: Type.Optional(Type.String({ pattern: '^[A-Z_]{1,40}$' })),
  actorId: Type.Optional(CursorParam),
});

/**
 * D59: guild administration, one route per action for whoever holds the permission. The same
 * plugin answers under /api/v1 (a bot's token or a person's session) and /app/v1 (D49's paths),
 * each route calling the one domain function of its action, which checks the bits (D57) and
 * rank (D58) of the actor itself. Creates 201, deletes 204. A mutating request may carry
 * X-Audit-Log-Reason (D60).
 */
export const guildAdminRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const tags = ['guild administration'];
  const id = (v: string): number => Number(v);

  app.get(
    '/guilds/:guildId',
    {
      schema: {
        tags,
        summary: 'A guild as the caller sees it (members, bots included: D59)',
        params: params('guildId'),
        response: responses({ 200: AppGuild }),
      },
    },
    async (req) => getAppGuild(d, actorOfRequest(req), id(req.params.guildId)),
  );

  app.patch(
    '/guilds/:guildId',
    {
      schema: {
        tags,
        summary: 'Rename the guild (MANAGE_GUILD); GUILD_UPDATE',
        params: params('guildId'),
        body: PatchGuildBody,
        response: responses({ 200: AppGuild }),
      },
    },
    async (req) => {
      const guildId = id(req.params.guildId);
      await updateGuild(d, actorOfRequest(req), guildId, { name: req.body.name });
      const view = await guildView(d.db, guildId, principalOf(req).userId);
      if (!view) throw forbidden('Not a member of this guild');
      return view;
    },
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
      await deleteGuild(d, actorOfRequest(req), id(req.params.guildId));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/guilds/:guildId/audit-log',
    {
      schema: {
        tags,
        summary: "The guild's audit log, newest first (VIEW_AUDIT_LOG, D60)",
        params: params('guildId'),
        querystring: AuditQuery,
        response: responses({ 200: AuditLog }),
      },
    },
    async (req) =>
      guildAuditLog(d, actorOfRequest(req), id(req.params.guildId), {
        before: num(req.query.before),
        limit: req.query.limit ?? 50,
        action: req.query.action,
        actorId: num(req.query.actorId),
      }),
  );

  // Channels.
  app.post(
    '/guilds/:guildId/channels',
    {
      schema: {
        tags,
        summary: 'Create a text channel (MANAGE_CHANNELS); CHANNEL_CREATE',
        params: params('guildId'),
        body: CreateAppChannelBody,
        response: responses({ 201: Channel }),
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await createChannel(d, actorOfRequest(req), id(req.params.guildId), req.body)),
  );

  app.patch(
    '/channels/:channelId',
    {
      schema: {
        tags,
        summary: "Change a channel's name or topic (MANAGE_CHANNELS); CHANNEL_UPDATE",
        params: params('channelId'),
        body: PatchChannelBody,
        response: responses({ 200: Channel }),
      },
    },
    async (req) => patchChannel(d, actorOfRequest(req), id(req.params.channelId), req.body),
  );

  app.delete(
    '/channels/:channelId',
    {
      schema: {
        tags,
        summary: 'Delete a channel with its messages (MANAGE_CHANNELS); CHANNEL_DELETE',
        params: params('channelId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteChannel(d, actorOfRequest(req), id(req.params.channelId));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/channels/:channelId/overwrites',
    {
      schema: {
        tags,
        summary: "A channel's role overwrites, role id ascending (MANAGE_CHANNELS, D11)",
        params: params('channelId'),
        response: responses({ 200: OverwriteList }),
      },
    },
    async (req) => ({
      overwrites: await listOverwrites(d, actorOfRequest(req), id(req.params.channelId)),
    }),
  );

  app.put(
    '/channels/:channelId/overwrites/:roleId',
    {
      schema: {
        tags,
        summary: "Set a role's overwrite on a channel (MANAGE_CHANNELS, D11)",
        params: params('channelId', 'roleId'),
        body: AppOverwriteBody,
        response: responses({ 200: Overwrite }),
      },
    },
    async (req) =>
      putOverwrite(
        d,
        actorOfRequest(req),
        id(req.params.channelId),
        id(req.params.roleId),
        req.body,
      ),
  );

  // Roles.
  app.get(
    '/guilds/:guildId/roles',
    {
      schema: {
        tags,
        summary: "The guild's roles in rank order, @everyone first (members, bots included)",
        params: params('guildId'),
        response: responses({ 200: RoleList }),
      },
    },
    async (req) => ({ roles: await listRoles(d, actorOfRequest(req), id(req.params.guildId)) }),
  );

  app.post(
    '/guilds/:guildId/roles',
    {
      schema: {
        tags,
        summary: 'Create a role just above @everyone (MANAGE_ROLES); GUILD_ROLES_UPDATE',
        params: params('guildId'),
        body: CreateAppRoleBody,
        response: responses({ 201: Role }),
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await createRole(d, actorOfRequest(req), id(req.params.guildId), req.body)),
  );

  app.patch(
    '/guilds/:guildId/roles',
    {
      schema: {
        tags,
        summary: 'Reorder roles [{id, position}] below your own rank (MANAGE_ROLES, D58)',
        params: params('guildId'),
        body: ReorderRolesBody,
        response: responses({ 200: RoleList }),
      },
    },
    async (req) => ({
      roles: await reorderRoles(d, actorOfRequest(req), id(req.params.guildId), req.body),
    }),
  );

  app.patch(
    '/roles/:roleId',
    {
      schema: {
        tags,
        summary: 'Change a role below your rank (MANAGE_ROLES; @everyone: not its name)',
        params: params('roleId'),
        body: PatchRoleBody,
        response: responses({ 200: Role }),
      },
    },
    async (req) => patchRole(d, actorOfRequest(req), id(req.params.roleId), req.body),
  );

  app.delete(
    '/roles/:roleId',
    {
      schema: {
        tags,
        summary: 'Delete a role below your rank (MANAGE_ROLES; not @everyone)',
        params: params('roleId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteRole(d, actorOfRequest(req), id(req.params.roleId));
      return reply.code(204).send(null);
    },
  );

  // Members.
  app.put(
    '/guilds/:guildId/members/:userId/roles',
    {
      schema: {
        tags,
        summary: "Set a member's roles (MANAGE_ROLES, D58 rank); GUILD_MEMBER_UPDATE",
        params: params('guildId', 'userId'),
        body: MemberRolesBody,
        response: responses({ 200: MemberRoles }),
      },
    },
    async (req) =>
      setMemberRoles(
        d,
        actorOfRequest(req),
        id(req.params.guildId),
        id(req.params.userId),
        req.body.roles,
      ),
  );

  app.patch(
    '/guilds/:guildId/members/:userId',
    {
      schema: {
        tags,
        summary: 'Time a member out, or end it (MODERATE_MEMBERS, D58 rank, ≤ 28 days)',
        params: params('guildId', 'userId'),
        body: PatchMemberBody,
        response: responses({ 200: MemberRoles }),
      },
    },
    async (req) =>
      timeoutMember(
        d,
        actorOfRequest(req),
        id(req.params.guildId),
        id(req.params.userId),
        req.body.timeoutUntil,
      ),
  );

  app.delete(
    '/guilds/:guildId/members/:userId',
    {
      schema: {
        tags,
        summary: 'Kick a member (KICK_MEMBERS, D58 rank; not the owner: 409); GUILD_MEMBER_REMOVE',
        params: params('guildId', 'userId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await kickMember(d, actorOfRequest(req), id(req.params.guildId), id(req.params.userId));
      return reply.code(204).send(null);
    },
  );

  // Bans.
  app.put(
    '/guilds/:guildId/bans/:userId',
    {
      schema: {
        tags,
        summary: 'Ban a user: removes the member and refuses rejoining (BAN_MEMBERS, D58 rank)',
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
      await banUser(d, actorOfRequest(req), id(req.params.guildId), id(req.params.userId));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/guilds/:guildId/bans/:userId',
    {
      schema: {
        tags,
        summary: 'Lift a ban (BAN_MEMBERS)',
        params: params('guildId', 'userId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await unbanUser(d, actorOfRequest(req), id(req.params.guildId), id(req.params.userId));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/guilds/:guildId/bans',
    {
      schema: {
        tags,
        summary: "The guild's bans (BAN_MEMBERS)",
        params: params('guildId'),
        response: responses({ 200: BanList }),
      },
    },
    async (req) => ({ bans: await listBans(d, actorOfRequest(req), id(req.params.guildId)) }),
  );

  // Invites.
  app.post(
    '/guilds/:guildId/invites',
    {
      schema: {
        tags,
        summary: 'Create an invite (CREATE_INVITE)',
        params: params('guildId'),
        body: CreateInviteBody,
        response: responses({ 201: Invite }),
      },
      // Both fields are optional, so is the body (D44: no body, with or without Content-Type).
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await createInvite(d, actorOfRequest(req), id(req.params.guildId), req.body ?? {})),
  );

  app.get(
    '/guilds/:guildId/invites',
    {
      schema: {
        tags,
        summary: "The guild's invites, newest first (MANAGE_GUILD)",
        params: params('guildId'),
        response: responses({ 200: InviteList }),
      },
    },
    async (req) => ({
      invites: await listInvites(d, actorOfRequest(req), id(req.params.guildId)),
    }),
  );

  app.delete(
    '/invites/:code',
    {
      schema: {
        tags,
        summary: "Delete an invite (one's own: CREATE_INVITE; anyone's: MANAGE_GUILD)",
        params: CodeParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteInvite(d, actorOfRequest(req), req.params.code);
      return reply.code(204).send(null);
    },
  );
};
