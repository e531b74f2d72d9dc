import { Bot } from '@parley/protocol';
import { getMe } from '../../domain/bots/bots.service.js';
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
};
