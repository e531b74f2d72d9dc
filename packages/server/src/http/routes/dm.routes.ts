import { DmChannelRef } from '@parley/protocol';
import { openDm } from '../../domain/dms/dms.service.js';
import type { ApiPlugin } from '../app.js';
import { principalOf } from '../plugins/auth.js';
import { params, responses } from '../schemas.js';

export const dmRoutes: ApiPlugin = async (app, { deps }) => {
  app.post(
    '/users/:userId/dm',
    {
      schema: {
        tags: ['dm'],
        summary: 'Open (or get) the DM channel with a user; idempotent (D21)',
        params: params('userId'),
        response: responses({ 200: DmChannelRef }),
      },
    },
    async (req) => openDm(deps.domain, principalOf(req), Number(req.params.userId)),
  );
};
