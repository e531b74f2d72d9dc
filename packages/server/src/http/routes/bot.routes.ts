import { Bot, PatchBotMeBody } from '@parley/protocol';
import { getMe, patchMe } from '../../domain/bots/bots.service.js';
import type { ApiPlugin } from '../app.js';
import { principalOf } from '../plugins/auth.js';
import { responses } from '../schemas.js';

export const botRoutes: ApiPlugin = async (app, { deps }) => {
  app.get(
    '/bot/me',
    {
      schema: {
        tags: ['bot'],
        summary: 'The calling bot (a 200 proves the token is valid)',
        response: responses({ 200: Bot }),
      },
    },
    async (req) => getMe(deps.domain, principalOf(req)),
  );

  app.patch(
    '/bot/me',
    {
      schema: {
        tags: ['bot'],
        summary:
          "Set the calling bot's event subscription beyond D34's eight, for gateway and webhook alike (D63)",
        body: PatchBotMeBody,
        response: responses({ 200: Bot }),
      },
    },
    async (req) => patchMe(deps.domain, principalOf(req), req.body),
  );
};
