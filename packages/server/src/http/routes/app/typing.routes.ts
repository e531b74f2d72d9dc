import { startTyping } from '../../../domain/typing/typing.service.js';
import type { ApiPlugin } from '../../app.js';
import { principalOf } from '../../plugins/auth.js';
import { NoContent, params, responses } from '../../schemas.js';

export const typingRoutes: ApiPlugin = async (app, { deps }) => {
  app.post(
    '/channels/:channelId/typing',
    {
      schema: {
        tags: ['app'],
        summary:
          'Tell the people who can see the channel that the caller is typing: TYPING_START on the gateway, shown for 8 s (D51): 204',
        params: params('channelId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await startTyping(deps.domain, principalOf(req), Number(req.params.channelId));
      return reply.code(204).send(null);
    },
  );
};
