import { randomBytes } from 'node:crypto';
import {
  Permission,
  type CreateInviteBody,
  type Invite,
  type InvitePreview,
} from '@parley/protocol';
import { forbidden, notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import { isUniqueViolation, type Db } from '../../storage/db.js';
import type { InvitesTable } from '../../storage/schema-people.js';
import type { Principal } from '../auth/principal.js';
import { requireGuild } from '../permissions/access.service.js';
import type { Domain } from '../context.js';
import { diff, writeAudit } from '../audit/audit.service.js';
import { actorUserId, type Actor } from '../guilds/actor.js';
import { requireRight } from '../guilds/rights.js';
import { joinGuild } from '../members/members.service.js';
import { consumeInvite } from './consume.js';

/**
 * D49 invites. A code is 12 random base62 characters (~71 bits: not guessable, and short enough
 * to type); its URL is the web app's page `<public origin>/invite/<code>`. An invite is usable
 * while it has uses left and has not expired; otherwise it is as unknown (404).
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const CODE_LENGTH = 12;

export function newInviteCode(): string {
  let code = '';
  while (code.length < CODE_LENGTH) {
    for (const b of randomBytes(16)) {
      // 248 = 4 × 62: bytes at or above it would favour the first letters.
      if (b < 248 && code.length < CODE_LENGTH) code += ALPHABET[b % 62];
    }
  }
  return code;
}

export const inviteView = (d: Domain, r: InvitesTable): Invite => ({
  code: r.code,
  guildId: Number(r.guild_id),
  url: `${d.urls.origin}/invite/${r.code}`,
  uses: r.uses,
  maxUses: r.max_uses,
  expiresAt: r.expires_at === null ? null : iso(Number(r.expires_at)),
});

/**
 * The rows of a new invite, with no access check: `createInvite` below (people, bots and the
 * operator, D59) and the seed. `also` runs in the same transaction (D60: the audit entry).
 */
export async function insertInvite(
  d: Domain,
  guildId: number,
  creatorId: number | null,
  body: CreateInviteBody,
  also?: (trx: Db, code: string) => Promise<void>,
): Promise<Invite> {
  await requireGuild(d.db, guildId);
  const now = d.clock.now();
  for (let attempt = 1; ; attempt++) {
    const row: InvitesTable = {
      code: newInviteCode(),
      guild_id: guildId,
      creator_id: creatorId,
      max_uses: body.maxUses ?? null,
      uses: 0,
      expires_at: body.expiresInS === undefined ? null : now + body.expiresInS * 1000,
      created_at: now,
    };
    try {
      await d.db.transaction().execute(async (trx) => {
        await trx.insertInto('invites').values(row).execute();
        if (also) await also(trx, row.code);
      });
      return inviteView(d, row);
    } catch (err) {
      // A code already taken (2^-71 per pair: never in practice, but never a 500 either).
      if (!isUniqueViolation(err) || attempt >= 3) throw err;
    }
  }
}

/**
 * D49/D57/D59 create an invite (CREATE_INVITE; the operator's have no creator). 404 for an
 * unknown guild.
 */
export async function createInvite(
  d: Domain,
  actor: Actor,
  guildId: number,
  body: CreateInviteBody,
): Promise<Invite> {
  await requireRight(d, actor, guildId, Permission.CREATE_INVITE);
  return insertInvite(d, guildId, actorUserId(actor), body, (trx, code) =>
    writeAudit(trx, d, actor, {
      guildId,
      action: 'INVITE_CREATE',
      targetId: null,
      changes: diff(
        {},
        {
          code,
          maxUses: body.maxUses ?? null,
          expiresInS: body.expiresInS ?? null,
        },
      ),
    }),
  );
}

/** D49/D57: a guild's invites, newest first, used-up and expired ones included (MANAGE_GUILD). */
export async function listInvites(d: Domain, actor: Actor, guildId: number): Promise<Invite[]> {
  await requireRight(d, actor, guildId, Permission.MANAGE_GUILD);
  return guildInvites(d, guildId);
}

/** A guild's invites, newest first; no access check (the callers make it). */
export async function guildInvites(d: Domain, guildId: number): Promise<Invite[]> {
  const rows = await d.db
    .selectFrom('invites')
    .selectAll()
    .where('guild_id', '=', guildId)
    .orderBy('created_at', 'desc')
    .orderBy('code', 'asc')
    .execute();
  return rows.map((r) => inviteView(d, r));
}

/**
 * D49/D57 `DELETE /invites/:code`: one's own invite (CREATE_INVITE) or anyone's (MANAGE_GUILD);
 * 404 unknown.
 */
export async function deleteInvite(d: Domain, actor: Actor, code: string): Promise<void> {
  const inv = await d.db
    .selectFrom('invites')
    .select(['code', 'guild_id', 'creator_id'])
    .where('code', '=', code)
    .executeTakeFirst();
  if (!inv) throw notFound('invite');
  const guildId = Number(inv.guild_id);
  const own = actor.kind !== 'operator' && Number(inv.creator_id) === actor.principal.userId;
  await requireRight(d, actor, guildId, own ? Permission.CREATE_INVITE : Permission.MANAGE_GUILD);
  await d.db.transaction().execute(async (trx) => {
    const res = await trx.deleteFrom('invites').where('code', '=', code).executeTakeFirst();
    if (res.numDeletedRows === 0n) throw notFound('invite');
    await writeAudit(trx, d, actor, {
      guildId,
      action: 'INVITE_DELETE',
      targetId: null,
      changes: [{ key: 'code', old: code }],
    });
  });
}

export const usable = (r: Pick<InvitesTable, 'uses' | 'max_uses' | 'expires_at'>, now: number) =>
  (r.max_uses === null || r.uses < r.max_uses) &&
  (r.expires_at === null || Number(r.expires_at) > now);

/** D49 preview, for anyone with the code (no session): 404 unknown, used up or expired. */
export async function previewInvite(d: Domain, code: string): Promise<InvitePreview> {
  const row = await d.db
    .selectFrom('invites as i')
    .innerJoin('guilds as g', 'g.id', 'i.guild_id')
    .select(['i.code', 'i.uses', 'i.max_uses', 'i.expires_at', 'g.id', 'g.name'])
    .where('i.code', '=', code)
    .executeTakeFirst();
  if (!row || !usable(row, d.clock.now())) throw notFound('invite');
  const count = await d.db
    .selectFrom('members')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('guild_id', '=', row.id)
    .executeTakeFirstOrThrow();
  return {
    code: row.code,
    guild: { id: Number(row.id), name: row.name, memberCount: Number(count.n) },
  };
}

/**
 * D49 `POST /invites/:code/accept` → `{guildId}`, in one transaction:
 *  - unknown, used up or expired → 404 (which of them is not told);
 *  - banned from the guild → 403;
 *  - already a member → the same answer and nothing else: no use counted, no event;
 *  - otherwise one use is counted (consume.ts: one guarded UPDATE, so concurrent accepts never
 *    pass `maxUses`; the loser's 404 rolls its join back) and the person joins
 *    (GUILD_MEMBER_ADD to the bots, D34; GUILD_CREATE to the person, D51).
 */
export async function acceptInvite(
  d: Domain,
  p: Principal,
  code: string,
): Promise<{ guildId: number }> {
  const join = async (trx: Db): Promise<{ guildId: number }> => {
    const now = d.clock.now();
    const invite = await trx
      .selectFrom('invites')
      .select(['guild_id', 'uses', 'max_uses', 'expires_at'])
      .where('code', '=', code)
      .executeTakeFirst();
    if (!invite || !usable(invite, now)) throw notFound('invite (or it is used up or expired)');
    const guildId = Number(invite.guild_id);
    const member = await trx
      .selectFrom('members')
      .select('user_id')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', p.userId)
      .executeTakeFirst();
    if (member) return { guildId };
    await consumeInvite(trx, code, now);
    const joined = await joinGuild(trx, d, guildId, p.userId);
    // The ban is read after the join: on PostgreSQL the new member row holds the guild's key
    // lock, and a ban takes the guild row first (moderation.service.ts), so either the ban
    // committed before this read (403, the join rolls back) or it waits for this transaction
    // and then removes the new member. Never a banned member.
    const banned = await trx
      .selectFrom('bans')
      .select('user_id')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', p.userId)
      .executeTakeFirst();
    if (banned) throw forbidden('Banned from this guild');
    // The same person accepting twice at once: this one found no member row yet, counted a use
    // and then joined nobody — its count is undone by rolling back.
    if (!joined.created) throw new AlreadyMember(guildId);
    return { guildId };
  };
  try {
    return await d.db.transaction().execute(join);
  } catch (err) {
    if (err instanceof AlreadyMember) return { guildId: err.guildId };
    throw err;
  }
}

class AlreadyMember extends Error {
  constructor(readonly guildId: number) {
    super('already a member');
  }
}
