import { Permission, SEARCH_PAGE, type SearchHas, type SearchResult } from '@parley/protocol';
import { sql, type RawBuilder } from 'kysely';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireDmChannel } from '../dms/dms.service.js';
import { hydrate, selectMessages } from '../messages/read.js';
import { requireGuildMember } from '../permissions/access.service.js';
import { channelPermissions, has, type OverwriteRow } from '../permissions/permissions.js';
import { isPostgres } from '../../storage/raw-sql.js';
import { fts5Expression, parseQuery, tsqueryText } from './search-text.js';

/** D67: a search as the route validated it (ids as numbers). */
export interface SearchInput {
  q?: string | undefined;
  authorId?: number | undefined;
  channelId?: number | undefined;
  mentions?: number | undefined;
  has?: SearchHas | undefined;
  pinned?: boolean | undefined;
  before?: number | undefined;
  after?: number | undefined;
  limit: number;
  offset: number;
}

const READ = Permission.VIEW_CHANNEL | Permission.READ_MESSAGE_HISTORY;

/**
 * D67: the guild's channels the caller may read — VIEW_CHANNEL and READ_MESSAGE_HISTORY after
 * D11's overwrites. Computed before the search, which then asks only inside them
 * (`channel_id IN (…)` in its SQL): a page is never fetched and then filtered.
 */
async function readableChannels(d: Domain, p: Principal, guildId: number): Promise<number[]> {
  const { access } = await requireGuildMember(d, p, guildId);
  const [channels, overwrites] = await Promise.all([
    d.db.selectFrom('channels').select('id').where('guild_id', '=', guildId).execute(),
    d.db
      .selectFrom('channel_overwrites as o')
      .innerJoin('channels as c', 'c.id', 'o.channel_id')
      .select(['o.channel_id', 'o.role_id as roleId', 'o.allow', 'o.deny'])
      .where('c.guild_id', '=', guildId)
      .execute(),
  ]);
  const byChannel = new Map<number, OverwriteRow[]>();
  for (const o of overwrites) {
    const list = byChannel.get(Number(o.channel_id)) ?? [];
    list.push({ roleId: Number(o.roleId), allow: o.allow, deny: o.deny });
    byChannel.set(Number(o.channel_id), list);
  }
  return channels
    .map((c) => Number(c.id))
    .filter((id) => has(channelPermissions(access, guildId, byChannel.get(id) ?? []), READ));
}

/** D67: search a guild's readable channels. */
export async function searchGuild(
  d: Domain,
  p: Principal,
  guildId: number,
  input: SearchInput,
): Promise<SearchResult> {
  let channels = await readableChannels(d, p, guildId);
  // A channel the caller cannot read (or of another guild) simply has no hits for them.
  if (input.channelId !== undefined) channels = channels.filter((c) => c === input.channelId);
  return search(d, p, channels, input);
}

/** D67: search one DM the caller is a party of (D17's access rule). */
export async function searchDm(
  d: Domain,
  p: Principal,
  channelId: number,
  input: SearchInput,
): Promise<SearchResult> {
  const dm = await requireDmChannel(d, p, channelId);
  const channels = input.channelId === undefined || input.channelId === dm.id ? [dm.id] : [];
  return search(d, p, channels, input);
}

async function search(
  d: Domain,
  p: Principal,
  channels: number[],
  input: SearchInput,
): Promise<SearchResult> {
  const empty: SearchResult = { messages: [], total: 0, hasMore: false };
  if (channels.length === 0) return empty;
  const pg = isPostgres(d.db);
  const parsed = parseQuery(input.q ?? '');
  // Words given but none of them searchable (only punctuation or emoji): nothing can match.
  if ((input.q ?? '').trim() !== '' && parsed.must.length === 0 && parsed.not.length === 0)
    return empty;

  const inChannels = sql.join(channels.map((c) => sql.lit(c)));
  // SQLite with words: FTS5 first (below), each hit then found by its id and its channel
  // checked — `+` keeps SQLite from probing the (channel_id, id) index once per readable
  // channel and hit instead (1,000 channels × 1,001 hits: seconds, bench/README.md).
  const ftsFirst = !pg && parsed.must.length > 0;
  const where: RawBuilder<unknown>[] = [
    ftsFirst ? sql`+m.channel_id in (${inChannels})` : sql`m.channel_id in (${inChannels})`,
  ];
  let from: RawBuilder<unknown> = sql`messages m`;
  let order: RawBuilder<unknown> = sql`m.id desc`;
  if (pg) {
    if (parsed.must.length > 0 || parsed.not.length > 0)
      where.push(sql`m.search_vector @@ to_tsquery('simple', ${tsqueryText(parsed)})`);
  } else if (ftsFirst) {
    // FTS5 first and newest first by its rowid (= the message id): SQLite walks the index in
    // that order and stops at the page, instead of sorting every hit.
    let match = fts5Expression(parsed.must, 'AND');
    if (parsed.not.length > 0) match = `(${match}) NOT (${fts5Expression(parsed.not, 'OR')})`;
    from = sql`messages_fts f cross join messages m on m.id = f.rowid`;
    where.push(sql`messages_fts match ${match}`);
    order = sql`f.rowid desc`;
  } else if (parsed.not.length > 0) {
    where.push(
      sql`m.id not in (select rowid from messages_fts where messages_fts match ${fts5Expression(parsed.not, 'OR')})`,
    );
  }
  if (input.authorId !== undefined) where.push(sql`m.author_id = ${input.authorId}`);
  if (input.before !== undefined) where.push(sql`m.id < ${input.before}`);
  if (input.after !== undefined) where.push(sql`m.id > ${input.after}`);
  if (input.pinned !== undefined)
    where.push(input.pinned ? sql`m.pinned_at is not null` : sql`m.pinned_at is null`);
  if (input.mentions !== undefined)
    where.push(
      pg
        ? sql`(m.extra::jsonb -> 'mentions') @> ${JSON.stringify([input.mentions])}::jsonb`
        : sql`exists (select 1 from json_each(m.extra, '$.mentions') j where j.value = ${input.mentions})`,
    );
  if (input.has !== undefined) where.push(hasFilter(input.has));
  const cond = sql.join(where, sql` and `);

  // D67: total exact up to 1,000, then capped (a common word costs no full count). One query
  // reads the ids of the first 1,001 readable hits, newest first: the count and the page come
  // from it (the index is walked once, not once to count and again for the page).
  const cap = SEARCH_PAGE.totalCap;
  const hits = (
    await sql<{ id: number }>`select m.id from ${from} where ${cond}
      order by ${order} limit ${cap + 1}`.execute(d.db)
  ).rows;
  const total = Math.min(hits.length, cap);
  const ids = hits.slice(input.offset, input.offset + input.limit).map((r) => Number(r.id));
  const rows =
    ids.length === 0
      ? []
      : await selectMessages(d.db).where('m.id', 'in', ids).orderBy('m.id', 'desc').execute();
  const messages = await hydrate(d.db, rows, p.userId);
  return {
    messages,
    total,
    hasMore: input.offset + ids.length < total,
    ...capped(hits.length),
  };
}

const capped = (found: number): { totalCapped?: true } =>
  found > SEARCH_PAGE.totalCap ? { totalCapped: true } : {};

/**
 * D67's `has`, read from what a message stores: a link in its text, or its D61 extra (JSON
 * written by storeExtra, where a key in quotes can only be a key: quotes inside values are
 * escaped).
 */
function hasFilter(what: SearchHas): RawBuilder<unknown> {
  switch (what) {
    case 'link':
      return sql`(m.content like '%http://%' or m.content like '%https://%')`;
    case 'embed':
      return sql`m.extra like '%"embeds":[%'`;
    case 'file':
      return sql`m.extra like '%"attachments":[%'`;
    case 'image':
    case 'video':
    case 'audio':
      return sql`m.extra like ${`%"contentType":"${what}/%`}`;
  }
}
