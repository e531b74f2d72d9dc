import { AdminBotDetail, AdminBotList, AdminBotPatch } from '@parley/protocol';
import { deleteBot, getAdminBot, listBots, updateBot } from '../../domain/bots/bots.admin.js';
import type { ApiPlugin } from '../app.js';
import { NoContent, params, responses } from '../schemas.js';
import { AdminPageQuery, pageOf, security, tags } from './admin.people.routes.js';

/** D52: bots. */
export const adminBotRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;

  app.get(
    '/bots',
    {
      schema: {
        tags,
        security,
        summary: 'Bots by id ascending, optionally filtered by name (D52)',
        querystring: AdminPageQuery,
        response: responses({ 200: AdminBotList }),
      },
    },
    async (req) => listBots(d, pageOf(req.query)),
  );

  app.get(
    '/bots/:botId',
    {
      schema: {
        tags,
        security,
        summary: 'One bot, with its guilds and whether it is connected',
        params: params('botId'),
        response: responses({ 200: AdminBotDetail }),
      },
    },
    async (req) => getAdminBot(d, Number(req.params.botId)),
  );

  app.patch(
    '/bots/:botId',
    {
      schema: {
        tags,
        security,
        summary: "Change a bot's name, description or avatar",
        params: params('botId'),
        body: AdminBotPatch,
        response: responses({ 200: AdminBotDetail }),
      },
    },
    async (req) => updateBot(d, Number(req.params.botId), req.body),
  );

  app.delete(
    '/bots/:botId',
    {
      schema: {
        tags,
        security,
        summary:
          'Delete a bot: its token dies, its connection closes 4004, it leaves every guild (D50)',
        params: params('botId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteBot(d, Number(req.params.botId));
      return reply.code(204).send(null);
    },
  );
};
