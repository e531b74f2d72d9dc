import { Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import type { BlobStore } from '../../files/blob-store.js';
import { notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { fileUrl } from '../files/files.service.js';
import { getMe, myDms, myGuilds } from '../me/me.service.js';
import { channelView, memberView, messageView } from '../views.js';

/**
 * Issue 28: exports as a zip — a person's own data (`GET /app/v1/users/@me/export`) and a whole
 * guild for the operator (`parley admin guild export <id>`), in one format:
 *
 *   manifest.json      {format: "parley-export/1", kind: "person" | "guild", exportedAt, …}
 *   profile.json       the person (GET /app/v1/users/@me)              (person)
 *   guilds.json        their memberships (GET /app/v1/users/@me/guilds) (person)
 *   dms.json           their DM channels (GET /app/v1/users/@me/dms)    (person)
 *   guild.json         the guild, its channels and roles               (guild)
 *   members.jsonl      one member a line                               (guild)
 *   messages.jsonl     one message a line, as the API shows it (D17), oldest first: the
 *                      person's own guild messages / every message of the guild
 *   dm-messages.jsonl  every message of the person's DMs, both sides    (person)
 *   uploads.jsonl      the person's uploads: {id, filename, mime, size, url, createdAt, path}
 *   uploads/…          their bytes, at each line's `path`              (person)
 *
 * Everything is streamed: lines are read from the database a page at a time and uploads from
 * the blob store while the zip is written, so an export's size costs no memory.
 */
export const EXPORT_FORMAT = 'parley-export/1';
const PAGE = 500;

type MessageFilter =
  | { kind: 'author'; userId: number }
  | { kind: 'guild'; guildId: number }
  | { kind: 'dms'; userId: number };

/** JSON lines of messages, a page at a time by id (oldest first). */
async function* messageLines(d: Domain, filter: MessageFilter): AsyncGenerator<string> {
  let after = 0;
  for (;;) {
    let q = d.db
      .selectFrom('messages as m')
      .innerJoin('users as u', 'u.id', 'm.author_id')
      .select([
        'm.id',
        'm.channel_id',
        'm.guild_id',
        'm.author_id',
        'u.name as author_name',
        'm.content',
        'm.created_at',
        'm.edited_at',
      ])
      .where('m.id', '>', after);
    if (filter.kind === 'author')
      q = q.where('m.author_id', '=', filter.userId).where('m.guild_id', 'is not', null);
    else if (filter.kind === 'guild') q = q.where('m.guild_id', '=', filter.guildId);
    else {
      const uid = filter.userId;
      q = q.where('m.channel_id', 'in', (eb) =>
        eb
          .selectFrom('channels')
          .select('id')
          .where('guild_id', 'is', null)
          .where((w) => w.or([w('dm_user_low', '=', uid), w('dm_user_high', '=', uid)])),
      );
    }
    const rows = await q.orderBy('m.id', 'asc').limit(PAGE).execute();
    for (const r of rows)
      yield (
        JSON.stringify(
          messageView({
            ...r,
            id: Number(r.id),
            channel_id: Number(r.channel_id),
            guild_id: r.guild_id === null ? null : Number(r.guild_id),
            author_id: Number(r.author_id),
            created_at: Number(r.created_at),
            edited_at: r.edited_at === null ? null : Number(r.edited_at),
          }),
        ) + '\n'
      );
    const last = rows.at(-1);
    if (!last || rows.length < PAGE) return;
    after = Number(last.id);
  }
}

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v, null, 2) + '\n');
const lines = (gen: AsyncIterable<string>): Readable => Readable.from(gen);

/** A person's own data (the caller is that person). */
export async function exportPerson(d: Domain, blobs: BlobStore, p: Principal): Promise<Readable> {
  const zip = new ZipFile();
  const profile = await getMe(d, p);
  const guilds = await myGuilds(d, p);
  const dms = await myDms(d, p);
  const files = await d.db
    .selectFrom('files')
    .select(['id', 'storage_key', 'filename', 'mime', 'size', 'created_at'])
    .where('owner_id', '=', p.userId)
    .orderBy('id', 'asc')
    .execute();
  zip.addBuffer(
    json({
      format: EXPORT_FORMAT,
      kind: 'person',
      userId: p.userId,
      exportedAt: iso(d.clock.now()),
    }),
    'manifest.json',
  );
  zip.addBuffer(json(profile), 'profile.json');
  zip.addBuffer(json(guilds), 'guilds.json');
  zip.addBuffer(json(dms), 'dms.json');
  zip.addReadStream(lines(messageLines(d, { kind: 'author', userId: p.userId })), 'messages.jsonl');
  zip.addReadStream(lines(messageLines(d, { kind: 'dms', userId: p.userId })), 'dm-messages.jsonl');
  const uploads = files.map((f) => ({
    id: Number(f.id),
    filename: f.filename,
    mime: f.mime,
    size: Number(f.size),
    url: fileUrl(d.urls, Number(f.id), f.filename),
    createdAt: iso(Number(f.created_at)),
    // The id keeps two uploads of the same name apart; the name was made safe at upload (D23).
    path: `uploads/${f.id}-${f.filename}`,
  }));
  zip.addBuffer(
    Buffer.from(uploads.map((u) => JSON.stringify(u) + '\n').join('')),
    'uploads.jsonl',
  );
  for (const [i, f] of files.entries()) {
    const u = uploads[i];
    if (!u) continue;
    // Opened only when the zip reaches it (one blob open at a time).
    zip.addReadStreamLazy(u.path, (cb) => {
      blobs.read(f.storage_key).then(
        (s) => cb(null, s ?? Readable.from([])),
        (err: Error) => cb(err, Readable.from([])),
      );
    });
  }
  zip.end();
  return zip.outputStream as Readable;
}

/** A whole guild, for the operator. */
export async function exportGuild(d: Domain, guildId: number): Promise<Readable> {
  const guild = await d.db
    .selectFrom('guilds')
    .select(['id', 'name', 'owner_id', 'created_at'])
    .where('id', '=', guildId)
    .executeTakeFirst();
  if (!guild) throw notFound('guild');
  const [channels, roles] = await Promise.all([
    d.db
      .selectFrom('channels')
      .select(['id', 'guild_id', 'type', 'name', 'topic'])
      .where('guild_id', '=', guildId)
      .orderBy('id', 'asc')
      .execute(),
    d.db
      .selectFrom('roles')
      .select(['id', 'name', 'permissions'])
      .where('guild_id', '=', guildId)
      .orderBy('id', 'asc')
      .execute(),
  ]);
  const zip = new ZipFile();
  zip.addBuffer(
    json({ format: EXPORT_FORMAT, kind: 'guild', guildId, exportedAt: iso(d.clock.now()) }),
    'manifest.json',
  );
  zip.addBuffer(
    json({
      id: Number(guild.id),
      name: guild.name,
      ownerId: Number(guild.owner_id),
      createdAt: iso(Number(guild.created_at)),
      channels: channels.map((c) =>
        channelView({ ...c, id: Number(c.id), guild_id: Number(c.guild_id) }),
      ),
      roles: roles.map((r) => ({
        id: Number(r.id),
        name: r.name,
        permissions: Number(r.permissions),
      })),
    }),
    'guild.json',
  );
  zip.addReadStream(lines(memberLines(d, guildId)), 'members.jsonl');
  zip.addReadStream(lines(messageLines(d, { kind: 'guild', guildId })), 'messages.jsonl');
  zip.end();
  return zip.outputStream as Readable;
}

async function* memberLines(d: Domain, guildId: number): AsyncGenerator<string> {
  let after = 0;
  for (;;) {
    const rows = await d.db
      .selectFrom('members as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['u.id', 'u.name', 'u.avatar', 'm.joined_at'])
      .where('m.guild_id', '=', guildId)
      .where('u.id', '>', after)
      .orderBy('u.id', 'asc')
      .limit(PAGE)
      .execute();
    for (const r of rows) {
      const roles = await d.db
        .selectFrom('member_roles')
        .select('role_id')
        .where('guild_id', '=', guildId)
        .where('user_id', '=', r.id)
        .orderBy('role_id', 'asc')
        .execute();
      yield (
        JSON.stringify(
          memberView(
            d.urls,
            { id: Number(r.id), name: r.name, avatar: r.avatar },
            roles.map((x) => Number(x.role_id)),
            Number(r.joined_at),
          ),
        ) + '\n'
      );
    }
    const last = rows.at(-1);
    if (!last || rows.length < PAGE) return;
    after = Number(last.id);
  }
}
