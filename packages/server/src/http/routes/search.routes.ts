import { Type, type Static } from 'typebox';
import { CursorParam, IdParam, SEARCH_HAS, SEARCH_PAGE, SearchResult } from '@parley/protocol';
import { searchDm, searchGuild, type SearchInput } from '../../domain/search/search.service.js';
import type { ApiPlugin } from '../app.js';
import { principalOf } from '../plugins/auth.js';
import { num, params, responses } from '../schemas.js';

/** D67: a search's query string. */
export const SearchQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 512 })),
  authorId: Type.Optional(IdParam),
  channelId: Type.Optional(IdParam),
  mentions: Type.Optional(IdParam),
  has: Type.Optional(Type.Union(SEARCH_HAS.map((h) => Type.Literal(h)))),
  pinned: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  before: Type.Optional(CursorParam),
  after: Type.Optional(CursorParam),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: SEARCH_PAGE.max, default: SEARCH_PAGE.default }),
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: SEARCH_PAGE.maxOffset, default: 0 })),
});
type SearchQuery = Static<typeof SearchQuery>;

const input = (q: SearchQuery): SearchInput => ({
  q: q.q,
  authorId: num(q.authorId),
  channelId: num(q.channelId),
  mentions: num(q.mentions),
  has: q.has,
  pinned: q.pinned === undefined ? undefined : q.pinned === 'true',
  before: num(q.before),
  after: num(q.after),
  limit: q.limit ?? SEARCH_PAGE.default,
  offset: q.offset ?? 0,
});

/**
 * D67: message search, for a bot's token and a person's session alike (D59: /api/v1 reads
 * either). Only channels where the caller has VIEW_CHANNEL and READ_MESSAGE_HISTORY; a DM for
 * its two parties.
 */
export const searchRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const description =
    '`q`: words (all must match, the last as a prefix), `"phrases"`, `-word`; CJK words of any ' +
    'length. Newest first; `total` exact up to 1000, then 1000 with `totalCapped: true`.';
  app.get(
    '/guilds/:guildId/messages/search',
    {
      schema: {
        tags: ['messages'],
        summary: "Search the messages of a guild's channels the caller can read (D67)",
        description,
        params: params('guildId'),
        querystring: SearchQuery,
        response: responses({ 200: SearchResult }),
      },
    },
    async (req) => searchGuild(d, principalOf(req), Number(req.params.guildId), input(req.query)),
  );
  app.get(
    '/dm/channels/:channelId/messages/search',
    {
      schema: {
        tags: ['dm'],
        summary: 'Search the messages of a DM channel (D67)',
        description,
        params: params('channelId'),
        querystring: SearchQuery,
        response: responses({ 200: SearchResult }),
      },
    },
    async (req) => searchDm(d, principalOf(req), Number(req.params.channelId), input(req.query)),
  );
};
