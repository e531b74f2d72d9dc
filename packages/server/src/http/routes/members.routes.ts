import { Type } from 'typebox';
import { Member, MemberSummary, MEMBER_PAGE } from '@parley/protocol';
import { getMember, listMembers } from '../../domain/members/members.service.js';
import type { ApiPlugin } from '../app.js';
import { principalOf } from '../plugins/auth.js';
import { MemberListQuery, num, params, responses } from '../schemas.js';

export const memberRoutes: ApiPlugin = async (app, { deps }) => {
  app.get(
    '/guilds/:guildId/members',
    {
      schema: {
        tags: ['members'],
        summary:
          'Members of a guild by user id ascending (D20); withRoles=true adds roles and timeoutUntil (D58)',
        params: params('guildId'),
        querystring: MemberListQuery,
        response: responses({
          200: Type.Object(
            { members: Type.Array(MemberSummary), hasMore: Type.Boolean() },
            { additionalProperties: false },
          ),
        }),
      },
    },
    async (req) =>
      listMembers(deps.domain, principalOf(req), Number(req.params.guildId), {
        after: num(req.query.after),
        limit: req.query.limit ?? MEMBER_PAGE.default,
        withRoles: req.query.withRoles === true,
      }),
  );

  app.get(
    '/guilds/:guildId/members/:userId',
    {
      schema: {
        tags: ['members'],
        summary: 'One member, with its role ids (D20)',
        params: params('guildId', 'userId'),
        response: responses({ 200: Member }),
      },
    },
    async (req) =>
      getMember(
        deps.domain,
        principalOf(req),
        Number(req.params.guildId),
        Number(req.params.userId),
      ),
  );
};
