import type { Message, PushPayload } from '@parley/protocol';
import type { Domain } from '../domain/context.js';

/** D66: a notification's text is short: the start of the message, never more. */
export const BODY_CHARS = 140;

/**
 * D66: what the service worker shows. The title says who and where (a DM: the author; a
 * mention: "author in #channel"); the body is the start of the text with mentions of people and
 * of the guild's roles as names (a channel stays "#channel": its name is for who may see it) —
 * no ids, tokens or links to files beyond what the message itself says; `url` is the app's
 * page of the channel; `tag` groups a channel's notifications (a newer one replaces it).
 */
export async function buildPayload(d: Domain, m: Message): Promise<PushPayload> {
  const names = new Map<number, string>();
  const ids = [...new Set(m.mentions ?? [])];
  if (ids.length > 0) {
    const rows = await d.db
      .selectFrom('users')
      .select(['id', 'name'])
      .where('id', 'in', ids)
      .execute();
    for (const r of rows) names.set(Number(r.id), r.name);
  }
  // the guild's roles by name (every member sees them); a role of another guild stays "@role"
  const roles = new Map<number, string>();
  const roleIds = [...m.content.matchAll(/<@&([0-9]{1,20})>/g)].map((x) => Number(x[1]));
  if (roleIds.length > 0 && m.guildId !== undefined) {
    const rows = await d.db
      .selectFrom('roles')
      .select(['id', 'name'])
      .where('guild_id', '=', m.guildId)
      .where('id', 'in', [...new Set(roleIds)])
      .execute();
    for (const r of rows) roles.set(Number(r.id), r.name);
  }
  let text = m.content
    // D62: a ||spoiler|| is hidden until the reader clicks it in the app; a notification on a
    // lock screen must not show it (the dialect's rule: from `||` to the next `||`, not empty)
    .replace(/\|\|[\s\S]+?\|\|/g, '(spoiler)')
    .replace(/<@!?([0-9]+)>/g, (_, id: string) => `@${names.get(Number(id)) ?? 'someone'}`)
    .replace(/<@&([0-9]+)>/g, (_, id: string) => `@${roles.get(Number(id)) ?? 'role'}`)
    .replace(/<#[0-9]+>/g, '#channel')
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') text = m.attachments?.length ? 'sent an attachment' : 'sent a message';
  const chars = [...text];
  const body = chars.length > BODY_CHARS ? `${chars.slice(0, BODY_CHARS - 1).join('')}…` : text;
  const tag = `channel:${m.channelId}`;
  if (m.guildId === undefined) {
    return { title: m.author.name, body, url: `/dm/${m.channelId}`, tag };
  }
  const ch = await d.db
    .selectFrom('channels')
    .select('name')
    .where('id', '=', m.channelId)
    .executeTakeFirst();
  const where = ch?.name ? ` in #${ch.name}` : '';
  return { title: `${m.author.name}${where}`, body, url: `/g/${m.guildId}/${m.channelId}`, tag };
}
