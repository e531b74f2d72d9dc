import { Type } from 'typebox';
import {
  AdminInvitePatch,
  CreateInviteBody,
  Invite,
  InviteCodeParam,
  InviteList,
} from '@parley/protocol';
import { getInvite, listInvites, updateInvite } from '../../domain/invites/invites.admin.js';
import { operatorCreateInvite, operatorDeleteInvite } from '../../domain/admin/operator.js';
import type { ApiPlugin } from '../app.js';
import { auditReason } from '../plugins/actor.js';
import { NoContent, params, responses } from '../schemas.js';
import { security, tags } from './admin.people.routes.js';

const codeParam = Type.Object({ code: InviteCodeParam });

/** D49/D52: invites (`url` = `<public origin>/invite/<code>`). */
export const adminInviteRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;

  app.post(
    '/guilds/:guildId/invites',
    {
      schema: {
        tags,
        security,
        summary: 'Create an invite to the guild',
        params: params('guildId'),
        body: CreateInviteBody,
        response: responses({ 201: Invite }),
      },
      // D44: no body at all is an invite with no limits.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(
          await operatorCreateInvite(d, Number(req.params.guildId), req.body, auditReason(req)),
        ),
  );

  app.get(
    '/guilds/:guildId/invites',
    {
      schema: {
        tags,
        security,
        summary: "The guild's invites, newest first (used-up and expired ones too)",
        params: params('guildId'),
        response: responses({ 200: InviteList }),
      },
    },
    async (req) => listInvites(d, Number(req.params.guildId)),
  );

  app.get(
    '/invites/:code',
    {
      schema: {
        tags,
        security,
        summary: 'One invite',
        params: codeParam,
        response: responses({ 200: Invite }),
      },
    },
    async (req) => getInvite(d, req.params.code),
  );

  app.patch(
    '/invites/:code',
    {
      schema: {
        tags,
        security,
        summary: "Change an invite's use limit or expiry (null: unlimited / never)",
        params: codeParam,
        body: AdminInvitePatch,
        response: responses({ 200: Invite }),
      },
    },
    async (req) => updateInvite(d, req.params.code, req.body),
  );

  app.delete(
    '/invites/:code',
    {
      schema: {
        tags,
        security,
        summary: 'Delete an invite',
        params: codeParam,
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await operatorDeleteInvite(d, req.params.code, auditReason(req));
      return reply.code(204).send(null);
    },
  );
};
