import { Type } from 'typebox';
import {
  AcceptedInvite,
  CreateInviteBody,
  Invite,
  InviteList,
  InvitePreview,
} from '@parley/protocol';
import {
  acceptInvite,
  createGuildInvite,
  deleteInvite,
  listInvites,
  previewInvite,
} from '../../../domain/invites/invites.service.js';
import type { ApiPlugin } from '../../app.js';
import { principalOf } from '../../plugins/auth.js';
import { NoContent, params, responses } from '../../schemas.js';

/** An invite code in a path: what codes are made of (anything else is 400, like a bad id). */
const CodeParams = Type.Object({
  code: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
});

/** D49 invites: created and listed by administrators, previewed by anyone, accepted by people. */
export const inviteRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const tags = ['app'];

  app.post(
    '/guilds/:guildId/invites',
    {
      schema: {
        tags,
        summary: 'Create an invite (ADMINISTRATOR)',
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
        .send(
          await createGuildInvite(d, principalOf(req), Number(req.params.guildId), req.body ?? {}),
        ),
  );

  app.get(
    '/guilds/:guildId/invites',
    {
      schema: {
        tags,
        summary: "The guild's invites, newest first (ADMINISTRATOR)",
        params: params('guildId'),
        response: responses({ 200: InviteList }),
      },
    },
    async (req) => ({
      invites: await listInvites(d, principalOf(req), Number(req.params.guildId)),
    }),
  );

  app.delete(
    '/invites/:code',
    {
      schema: {
        tags,
        summary: 'Delete an invite (ADMINISTRATOR of its guild)',
        params: CodeParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteInvite(d, principalOf(req), req.params.code);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/invites/:code',
    {
      schema: {
        tags,
        summary: 'Preview an invite (no session needed); 404 unknown, used up or expired',
        params: CodeParams,
        response: responses({ 200: InvitePreview }),
        security: [],
      },
      config: { public: true },
    },
    async (req) => previewInvite(d, req.params.code),
  );

  app.post(
    '/invites/:code/accept',
    {
      schema: {
        tags,
        summary: 'Join the guild of an invite (banned: 403)',
        params: CodeParams,
        response: responses({ 200: AcceptedInvite }),
      },
    },
    async (req) => acceptInvite(d, principalOf(req), req.params.code),
  );
};
