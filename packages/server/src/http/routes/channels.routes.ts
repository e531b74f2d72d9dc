import { Type } from 'typebox';
import { Channel, ChannelSummary } from '@parley/protocol';
import { getGuildChannel, listGuildChannels } from '../../domain/channels/channels.service.js';
import type { ApiPlugin } from '../app.js';
import { principalOf } from '../plugins/auth.js';
import { params, responses } from '../schemas.js';

export const channelRoutes: ApiPlugin = async (app, { deps }) => {
  app.get(
    '/guilds/:guildId/channels',
    {
      schema: {
        tags: ['channels'],
        summary: 'Channels of a guild the caller can view (D12, D19)',
        params: params('guildId'),
        response: responses({
          200: Type.Object(
            { channels: Type.Array(ChannelSummary) },
            { additionalProperties: false },
          ),
        }),
      },
    },
    async (req) => ({
      channels: await listGuildChannels(deps.domain, principalOf(req), Number(req.params.guildId)),
    }),
  );

  app.get(
    '/channels/:channelId',
    {
      schema: {
        tags: ['channels'],
        summary: 'One guild channel, with its topic (D19)',
        params: params('channelId'),
        response: responses({ 200: Channel }),
      },
    },
    async (req) => getGuildChannel(deps.domain, principalOf(req), Number(req.params.channelId)),
  );
};
