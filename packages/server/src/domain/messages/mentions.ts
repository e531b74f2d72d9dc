import type { AllowedMentions } from '@parley/protocol';
import { Permission } from '@parley/protocol';
import type { Db } from '../../storage/db.js';
import { builtOnce } from '../../storage/raw-sql.js';
import type { Domain } from '../context.js';
import { membersAmong } from '../permissions/access.service.js';
import { has } from '../permissions/permissions.js';

/**
 * D62: the mentions written in a message's content, as the grammar reads them — never inside
 * code (`` `…` `` or fenced blocks) and never when escaped with `\`.
 */
export interface WrittenMentions {
  users: number[];
  roles: number[];
  channels: number[];
  everyone: boolean;
}

const MAX_PARSED = 100;

/** Code spans and fences hold text, not mentions (the D62 grammar, as the web app renders it). */
const CODE = /```[\s\S]*?```|`[^`\n]+`/g;
const TOKEN = /\\.|<@(\d{1,16})>|<@&(\d{1,16})>|<#(\d{1,16})>|@(everyone|here)\b/g;

export function parseMentions(content: string): WrittenMentions {
  const text = content.includes('`') ? content.replace(CODE, ' ') : content;
  const users = new Set<number>();
  const roles = new Set<number>();
  const channels = new Set<number>();
  let everyone = false;
  for (const m of text.matchAll(TOKEN)) {
    if (m[0].startsWith('\\')) continue; // an escaped character: never a mention
    if (m[1] !== undefined && users.size < MAX_PARSED) users.add(Number(m[1]));
    else if (m[2] !== undefined && roles.size < MAX_PARSED) roles.add(Number(m[2]));
    else if (m[3] !== undefined && channels.size < MAX_PARSED) channels.add(Number(m[3]));
    else if (m[4] !== undefined) everyone = true;
  }
  const safe = (s: Set<number>) => [...s].filter((n) => Number.isSafeInteger(n) && n > 0);
  return { users: safe(users), roles: safe(roles), channels: safe(channels), everyone };
}

export interface ResolvedMentions {
  mentions: number[];
  mentionRoles: number[];
  mentionEveryone: boolean;
  /** guild messages: which of `mentions` are people (the only ones D66 addresses) */
  mentionedPeople?: number[];
}

/**
 * D62: who a message notifies. Only members of the guild (in a DM, its two parties), only the
 * guild's roles — a role notifies when it is `mentionable` (D58) or the author holds
 * MENTION_EVERYONE (D57: "non-mentionable roles notify" with it) — and `@everyone`/`@here` only
 * with MENTION_EVERYONE; then minus what `allowedMentions` suppresses (D61: absent = everything
 * parsed, the replied-to author included — Discord's rule).
 */
export async function resolveMentions(
  d: Domain,
  /** where reads go: the send's transaction inside one (SQLite), else d.db */
  db: Db,
  o: {
    content: string;
    guildId: number | null;
    /** a DM's two parties */
    dmUserIds?: readonly number[];
    /** the author's bits in the channel (guild messages) */
    permissions: number;
    allowed: AllowedMentions | undefined;
    /** the author of the message replied to, when there is one */
    repliedUserId?: number | undefined;
    authorId: number;
  },
): Promise<ResolvedMentions> {
  const written = parseMentions(o.content);
  const allowed = o.allowed;
  const parse = new Set(allowed ? (allowed.parse ?? []) : ['users', 'roles', 'everyone']);
  const userOk = (id: number) => parse.has('users') || (allowed?.users ?? []).includes(id);
  const roleOk = (id: number) => parse.has('roles') || (allowed?.roles ?? []).includes(id);

  const wantUsers = written.users.filter(userOk);
  if (o.repliedUserId !== undefined && o.repliedUserId !== o.authorId) {
    // Discord's rule: the replied-to author is pinged unless `repliedUser: false` — and when
    // allowedMentions is given, only if it says `repliedUser: true`.
    const ping = allowed ? allowed.repliedUser === true : true;
    if (ping && !wantUsers.includes(o.repliedUserId)) wantUsers.push(o.repliedUserId);
  }
  let mentions: number[] = [];
  let mentionedPeople: number[] | undefined = o.guildId === null ? undefined : [];
  if (wantUsers.length > 0) {
    if (o.guildId === null) {
      const parties = new Set(o.dmUserIds ?? []);
      mentions = wantUsers.filter((id) => parties.has(id));
    } else {
      // Which of them are people too (D66 addresses only people): the send needs no second read.
      // From the access check's cached standings; a miss loads through `db` (the send's own
      // transaction on SQLite).
      const found = await membersAmong(d, o.guildId, wantUsers, db);
      mentions = found.members;
      mentionedPeople = found.people;
    }
  }
  const mayEveryone = o.guildId !== null && has(o.permissions, Permission.MENTION_EVERYONE);
  let mentionRoles: number[] = [];
  const wantRoles = written.roles.filter(roleOk).filter((id) => id !== o.guildId);
  if (o.guildId !== null && wantRoles.length > 0) {
    const rows = await builtOnce(
      db,
      `roles-in:${wantRoles.length}`,
      () =>
        db
          .selectFrom('roles')
          .select(['id', 'mentionable'])
          .where('guild_id', '=', 0)
          .where(
            'id',
            'in',
            wantRoles.map(() => 0),
          ),
      [o.guildId, ...wantRoles],
    );
    // D61/D62: a mentionable role notifies whoever writes it; any other only with
    // MENTION_EVERYONE (D57).
    const known = new Set(
      rows.filter((r) => mayEveryone || Number(r.mentionable) === 1).map((r) => Number(r.id)),
    );
    mentionRoles = wantRoles.filter((id) => known.has(id));
  }
  const mentionEveryone = written.everyone && parse.has('everyone') && mayEveryone;
  return {
    mentions,
    mentionRoles,
    mentionEveryone,
    ...(mentionedPeople ? { mentionedPeople } : {}),
  };
}
