import type {
  AppOverwriteBody,
  Channel,
  CreateAppChannelBody,
  Overwrite,
  PatchChannelBody,
} from '@parley/protocol';
import { invalid, notFound } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';
import { Permission } from '@parley/protocol';
import { diff, writeAudit } from '../audit/audit.service.js';
import type { Domain } from '../context.js';
import type { Actor } from '../guilds/actor.js';
import { requireBitsHeld, requireChannelRight, requireRight } from '../guilds/rights.js';
import { channelViewers, emitViewChanges, viewSnapshot } from '../guilds/audience.js';
import { channelView } from '../views.js';
import { requireChannelRoom } from './channel-limit.js';

/**
 * D49/D57–D59 channels: one function per action for people, bots and the operator alike, each
 * needing MANAGE_CHANNELS (the operator passes) and writing its audit entry (D60). CHANNEL_CREATE / CHANNEL_UPDATE (Channel with topic)
 * go to the members who can VIEW the channel once the change is made — a hidden channel's name
 * and topic never reach the others; CHANNEL_DELETE {id, guildId} to those who could VIEW it
 * (D70: channel events only to those who can see the channel).
 */
export async function toViewers(
  trx: Db,
  d: Domain,
  type: 'CHANNEL_CREATE' | 'CHANNEL_UPDATE',
  channel: Channel,
): Promise<void> {
  const userIds = await channelViewers(trx, channel.guildId, channel.id, true);
  if (userIds.length > 0)
    d.people.people(trx, { type, data: channel, audience: { kind: 'users', userIds } });
}

/**
 * D49/D70 create a channel; with `overwrites` it is private from the start: the channel and its
 * overwrites commit together and CHANNEL_CREATE goes only to who can VIEW it then. The roles must
 * be the guild's (404 otherwise), each at most once (400); the guild holds at most MAX_CHANNELS
 * (409).
 */
export async function createChannel(
  d: Domain,
  actor: Actor,
  guildId: number,
  body: CreateAppChannelBody & { type?: number | undefined },
): Promise<Channel> {
  const s = await requireRight(d, actor, guildId, Permission.MANAGE_CHANNELS);
  const overwrites = body.overwrites ?? [];
  for (const o of overwrites) requireBitsHeld(s, o.allow);
  const roleIds = overwrites.map((o) => o.roleId);
  if (new Set(roleIds).size !== roleIds.length)
    throw invalid('overwrites', 'lists a role more than once');
  if (roleIds.length > 0) {
    const found = await d.db
      .selectFrom('roles')
      .select('id')
      .where('guild_id', '=', guildId)
      .where('id', 'in', roleIds)
      .execute();
    if (found.length !== roleIds.length) throw notFound('role');
  }
  const row = {
    id: d.ids.next(),
    guild_id: guildId,
    type: body.type ?? 0,
    name: body.name,
    topic: body.topic ?? '',
  };
  const channel = channelView(row);
  await d.db.transaction().execute(async (trx) => {
    await requireChannelRoom(trx, d, guildId);
    await trx
      .insertInto('channels')
      .values({ ...row, dm_user_low: null, dm_user_high: null, created_at: d.clock.now() })
      .execute();
    if (overwrites.length > 0)
      await trx
        .insertInto('channel_overwrites')
        .values(
          overwrites.map((o) => ({
            channel_id: row.id,
            role_id: o.roleId,
            allow: o.allow,
            deny: o.deny,
          })),
        )
        .execute();
    await writeAudit(trx, d, actor, {
      guildId,
      action: 'CHANNEL_CREATE',
      targetId: row.id,
      changes: diff({}, { name: row.name, topic: row.topic }),
    });
    await toViewers(trx, d, 'CHANNEL_CREATE', channel);
  });
  return channel;
}

export async function patchChannel(
  d: Domain,
  actor: Actor,
  channelId: number,
  body: PatchChannelBody,
): Promise<Channel> {
  const { channel: ch } = await requireChannelRight(
    d,
    actor,
    channelId,
    Permission.MANAGE_CHANNELS,
  );
  const next = { name: body.name ?? ch.name, topic: body.topic ?? ch.topic };
  const channel = channelView({ id: ch.id, guild_id: ch.guildId, type: ch.type, ...next });
  await d.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('channels')
      .set(next)
      .where('id', '=', ch.id)
      .executeTakeFirst();
    if (res.numUpdatedRows === 0n) throw notFound('channel');
    await writeAudit(trx, d, actor, {
      guildId: ch.guildId,
      action: 'CHANNEL_UPDATE',
      targetId: ch.id,
      changes: diff({ name: ch.name, topic: ch.topic }, next),
    });
    await toViewers(trx, d, 'CHANNEL_UPDATE', channel);
  });
  return channel;
}

/** D49: the channel's messages, overwrites and read states go with it, in one transaction. */
export async function deleteChannel(d: Domain, actor: Actor, channelId: number): Promise<void> {
  const { channel: ch } = await requireChannelRight(
    d,
    actor,
    channelId,
    Permission.MANAGE_CHANNELS,
  );
  await d.db.transaction().execute(async (trx) => {
    // PostgreSQL: a message being sent meanwhile waits for this (its foreign key check shares
    // the channel's row), so no message is left behind pointing at a deleted channel.
    if (d.dialect === 'postgres')
      await trx.selectFrom('channels').select('id').where('id', '=', ch.id).forUpdate().execute();
    // D70: those who could see it hear of its end; to the others it never existed.
    const viewers = await channelViewers(trx, ch.guildId, ch.id, true);
    await trx.deleteFrom('messages').where('channel_id', '=', ch.id).execute();
    await trx.deleteFrom('channel_overwrites').where('channel_id', '=', ch.id).execute();
    await trx.deleteFrom('read_states').where('channel_id', '=', ch.id).execute();
    const res = await trx.deleteFrom('channels').where('id', '=', ch.id).executeTakeFirst();
    if (res.numDeletedRows === 0n) throw notFound('channel');
    await writeAudit(trx, d, actor, {
      guildId: ch.guildId,
      action: 'CHANNEL_DELETE',
      targetId: ch.id,
      changes: [{ key: 'name', old: ch.name }],
    });
    if (viewers.length > 0)
      d.people.people(trx, {
        type: 'CHANNEL_DELETE',
        data: { id: ch.id, guildId: ch.guildId },
        audience: { kind: 'users', userIds: viewers },
      });
  });
}

/**
 * D49 `PUT /channels/:channelId/overwrites/:roleId {allow, deny}` (the role must be one of the
 * channel's guild, @everyone included). Visibility may change (D70): CHANNEL_CREATE to the members
 * who can VIEW the channel now and could not, CHANNEL_DELETE to those who no longer can.
 */
export async function putOverwrite(
  d: Domain,
  actor: Actor,
  channelId: number,
  roleId: number,
  body: AppOverwriteBody,
): Promise<Overwrite> {
  const { channel: ch, standing } = await requireChannelRight(
    d,
    actor,
    channelId,
    Permission.MANAGE_CHANNELS,
  );
  // D58: an overwrite cannot grant bits its author does not hold.
  requireBitsHeld(standing, body.allow);
  const role = await d.db
    .selectFrom('roles')
    .select('id')
    .where('id', '=', roleId)
    .where('guild_id', '=', ch.guildId)
    .executeTakeFirst();
  if (!role) throw notFound('role');
  await d.db.transaction().execute(async (trx) => {
    const before = await viewSnapshot(trx, ch.guildId);
    const old = await trx
      .selectFrom('channel_overwrites')
      .select(['allow', 'deny'])
      .where('channel_id', '=', ch.id)
      .where('role_id', '=', roleId)
      .executeTakeFirst();
    await trx
      .insertInto('channel_overwrites')
      .values({ channel_id: ch.id, role_id: roleId, allow: body.allow, deny: body.deny })
      .onConflict((oc) =>
        oc.columns(['channel_id', 'role_id']).doUpdateSet({ allow: body.allow, deny: body.deny }),
      )
      .execute();
    await writeAudit(trx, d, actor, {
      guildId: ch.guildId,
      action: 'OVERWRITE_UPDATE',
      targetId: ch.id,
      changes: [
        { key: 'roleId', new: roleId },
        ...diff(old ?? { allow: 0, deny: 0 }, { allow: body.allow, deny: body.deny }),
      ],
    });
    await emitViewChanges(trx, d, ch.guildId, before);
  });
  return { channelId: ch.id, roleId, allow: body.allow, deny: body.deny };
}

/**
 * D57/D59 `GET /channels/:channelId/overwrites` (MANAGE_CHANNELS): what a channel's
 * "Permissions" tab edits — each role's overwrite, role id ascending.
 */
export async function listOverwrites(
  d: Domain,
  actor: Actor,
  channelId: number,
): Promise<Overwrite[]> {
  const { channel: ch } = await requireChannelRight(
    d,
    actor,
    channelId,
    Permission.MANAGE_CHANNELS,
  );
  const rows = await d.db
    .selectFrom('channel_overwrites')
    .select(['role_id', 'allow', 'deny'])
    .where('channel_id', '=', ch.id)
    .orderBy('role_id', 'asc')
    .execute();
  return rows.map((r) => ({
    channelId: ch.id,
    roleId: Number(r.role_id),
    allow: Number(r.allow),
    deny: Number(r.deny),
  }));
}
