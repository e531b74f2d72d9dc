import { Permission } from '@parley/protocol';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { describe, post } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import type { DmChannelRef, Guild, MemberSummary } from '../lib/types.js';
import { connState } from '../lib/gateway.js';
import {
  channelLog,
  dms,
  guilds,
  loadDms,
  loadMembers,
  me,
  members,
  presence,
  typing,
} from '../state/store.js';
import { Avatar, Dialog } from '../ui/kit.js';
import { Icon } from '../ui/icons.js';
import { NO_NAMES, type MentionNames } from '../ui/markdown.js';
import { toast } from '../ui/toast.js';
import { ADMIN_BITS, holds, nameColor, nameColors } from '../lib/permissions.js';
import { Composer } from './composer.js';
import { MemberActions } from './member-menu.js';
import { guildMentionSource } from './mention-autocomplete.js';
import { MessageList, type ViewerInfo } from './messages.js';
import { useMyRoles } from './my-roles.js';

export const isAdmin = (g: Guild): boolean =>
  (g.myPermissions & Permission.ADMINISTRATOR) !== 0 || g.ownerId === me.value?.id;

/** D57/D59: any right of guild administration — the guild's settings are worth opening. */
export const managesGuild = (g: Guild): boolean =>
  (g.myPermissions & ADMIN_BITS) !== 0 || g.ownerId === me.value?.id;

/** D21: open (or find) the DM with someone, then go there. */
export async function openDm(userId: number): Promise<void> {
  try {
    const r = await post<DmChannelRef>(`/api/v1/users/${userId}/dm`);
    if (!dms.value.some((d) => d.channelId === r.channelId)) await loadDms();
    navigate(`/dm/${r.channelId}`);
  } catch (x) {
    toast(describe(x));
  }
}

function TypingLine({ channelId, names }: { channelId: number; names: (id: number) => string }) {
  const who = [...(typing.value.get(channelId)?.keys() ?? [])].map(names);
  return (
    <div class="typing muted small" aria-live="polite">
      {who.length === 0
        ? '\u00a0'
        : who.length === 1
          ? `${who[0]} is typing…`
          : who.length < 4
            ? `${who.join(', ')} are typing…`
            : 'Several people are typing…'}
    </div>
  );
}

/** Drop files anywhere on the channel to upload them. */
function useDrop(onFiles: (f: File[]) => void) {
  const [over, setOver] = useState(false);
  return {
    over,
    handlers: {
      onDragOver: (e: DragEvent) => {
        if (e.dataTransfer?.types.includes('Files')) {
          e.preventDefault();
          setOver(true);
        }
      },
      onDragLeave: (e: DragEvent) => {
        if (e.currentTarget === e.target) setOver(false);
      },
      onDrop: (e: DragEvent) => {
        const files = [...(e.dataTransfer?.files ?? [])];
        if (files.length) {
          e.preventDefault();
          onFiles(files);
        }
        setOver(false);
      },
    },
  };
}

/** Any channel of my guilds, by id (a <#id> mention may name another guild's). */
const channelName = (id: number): string | undefined => {
  for (const g of guilds.value.values()) {
    const c = g.channels.find((x) => x.id === id);
    if (c) return c.name;
  }
  return undefined;
};

/** D62: how mentions read in a guild: its members, its roles, the channels I can see. */
export function guildNames(
  guild: Guild,
  list: readonly MemberSummary[],
  myRoles: ReadonlySet<number> = new Set(),
): MentionNames {
  const users = new Map(list.map((m) => [m.user.id, m.user.name]));
  const roles = new Map(
    guild.roles.map((r) => [
      r.id,
      { name: r.name, color: (r as { color?: number | null }).color ?? null },
    ]),
  );
  return {
    user: (id) => users.get(id) ?? (id === me.value?.id ? me.value.name : undefined),
    role: (id) => roles.get(id),
    channel: channelName,
    meId: me.value?.id,
    myRoles,
  };
}

/** D58: my running time-out in this guild (the members list read with roles), if any. */
function myTimeout(list: readonly MemberSummary[] | undefined, now: number): string | undefined {
  const until = list?.find((m) => m.user.id === me.value?.id)?.timeoutUntil;
  return until !== undefined && Date.parse(until) > now ? until : undefined;
}

/** Draw again when a time-out ends, so the composer opens by itself. */
function useTimeoutEnd(until: string | undefined): void {
  const [, tick] = useState(0);
  useEffect(() => {
    if (until === undefined) return;
    const t = setTimeout(
      () => tick((n) => n + 1),
      Math.min(Date.parse(until) - Date.now() + 50, 2 ** 31 - 1),
    );
    return () => clearTimeout(t);
  }, [until]);
}

export function ChannelView(props: { guild: Guild; channelId: number; showMembers: boolean }) {
  const { guild } = props;
  const channel = guild.channels.find((c) => c.id === props.channelId);
  const log = channelLog(props.channelId, 'guild');
  const list = members.value.get(guild.id);
  const [card, setCard] = useState<number | null>(null);
  if (!list) void loadMembers(guild.id).catch((x) => toast(describe(x)));
  const myRoles = useMyRoles(guild);
  // D57: what the reader may do with messages here (the owner and ADMINISTRATOR hold every bit)
  const may = (bit: number) => holds(guild, bit);
  const info = useMemo<ViewerInfo>(
    () => ({
      bots: new Set(guild.bots),
      avatars: new Map((list ?? []).map((m) => [m.user.id, m.user.avatar])),
      // D59: moderation deletes with MANAGE_MESSAGES (ADMINISTRATOR and the owner hold it)
      moderator: holds(guild, Permission.MANAGE_MESSAGES),
      names: guildNames(guild, list ?? [], myRoles),
      nameColors: nameColors(guild, list ?? []),
      // a name on a message opens the member's card (the member menu)
      onAuthor: (id) => setCard(id),
      canReact: may(Permission.ADD_REACTIONS),
      canPin: may(Permission.MANAGE_MESSAGES),
      canReply: may(Permission.SEND_MESSAGES),
    }),
    [guild, list, myRoles],
  );
  const carded = card === null ? undefined : list?.find((m) => m.user.id === card);
  const mentionSource = useMemo(
    () => guildMentionSource(guild, list ?? [], may(Permission.MENTION_EVERYONE)),
    [guild, list],
  );
  const uploader = useRef<((f: File[]) => void) | null>(null);
  const drop = useDrop((f) => uploader.current?.(f));
  const lastTyping = useRef(0);
  useTimeoutEnd(myTimeout(list, Date.now()));
  if (!channel) return <Empty text="This channel does not exist any more." />;
  const names = (id: number) => list?.find((m) => m.user.id === id)?.user.name ?? 'Someone';
  const canSend =
    (guild.myPermissions & (Permission.SEND_MESSAGES | Permission.ADMINISTRATOR)) !== 0;
  const timedOutUntil = myTimeout(list, Date.now());
  return (
    <div class={`channel-view${drop.over ? ' dropping' : ''}`} {...drop.handlers}>
      <Composer
        log={log}
        placeholder={`Message #${channel.name}`}
        disabled={
          timedOutUntil !== undefined
            ? `You are timed out until ${new Date(timedOutUntil).toLocaleString()}: you can read, not write.`
            : canSend
              ? undefined
              : 'You cannot send messages in this channel.'
        }
        uploadRef={uploader}
        mentions={mentionSource}
        names={info.names}
        onTyping={() => {
          // D51: one typing call per 6 s of typing at most (it shows for 8 s).
          if (Date.now() - lastTyping.current < 6000) return;
          lastTyping.current = Date.now();
          post(`/app/v1/channels/${channel.id}/typing`).catch(() => {});
        }}
      />
      <TypingLine channelId={channel.id} names={names} />
      <MessageList log={log} info={info} label={`Messages in #${channel.name}`} />
      {drop.over && <div class="drop-hint">Drop to upload</div>}
      {carded && <MemberDialog guild={guild} m={carded} open onClose={() => setCard(null)} />}
    </div>
  );
}

export function DmView({ channelId }: { channelId: number }) {
  const dm = dms.value.find((d) => d.channelId === channelId);
  const log = channelLog(channelId, 'dm');
  const info = useMemo<ViewerInfo>(
    () => ({
      bots: new Set(dm?.recipient.isBot ? [dm.recipient.id] : []),
      avatars: new Map(dm ? [[dm.recipient.id, dm.recipient.avatar]] : []),
      moderator: false,
      names: {
        ...NO_NAMES,
        user: (id) =>
          id === dm?.recipient.id
            ? dm.recipient.name
            : id === me.value?.id
              ? me.value.name
              : undefined,
        channel: channelName,
        meId: me.value?.id,
      },
      canPin: true, // D63: either party of a DM pins
    }),
    [dm],
  );
  const mentionSource = useMemo(
    () => ({
      people: [...(dm ? [dm.recipient] : []), ...(me.value ? [me.value] : [])],
      roles: [],
      // D62: <#id> may name any channel I can see
      channels: [...guilds.value.values()].flatMap((g) => g.channels),
      everyone: false,
    }),
    [dm],
  );
  const uploader = useRef<((f: File[]) => void) | null>(null);
  const drop = useDrop((f) => uploader.current?.(f));
  const lastTyping = useRef(0);
  const name = dm?.recipient.name ?? 'direct message';
  return (
    <div class={`channel-view${drop.over ? ' dropping' : ''}`} {...drop.handlers}>
      <Composer
        log={log}
        placeholder={`Message ${name}`}
        uploadRef={uploader}
        mentions={mentionSource}
        names={info.names}
        onTyping={() => {
          if (Date.now() - lastTyping.current < 6000) return;
          lastTyping.current = Date.now();
          post(`/app/v1/channels/${channelId}/typing`).catch(() => {});
        }}
      />
      <TypingLine channelId={channelId} names={() => name} />
      <MessageList log={log} info={info} label={`Messages with ${name}`} />
      {drop.over && <div class="drop-hint">Drop to upload</div>}
    </div>
  );
}

export function Empty({ text, children }: { text: string; children?: preact.ComponentChildren }) {
  return (
    <div class="empty">
      <p>{text}</p>
      {children}
    </div>
  );
}

/** D51: online while holding a gateway connection; the reader is, while connected. */
export const isOnline = (userId: number): boolean =>
  userId === me.value?.id ? connState.value === 'ready' : presence.value.get(userId) === 'online';

/**
 * A member's card (click a name — in the member list or on a message): who they are, a DM, and
 * the member menu's moderation (time out / kick / ban) when the viewer may (D57, D58).
 */
export function MemberDialog(props: {
  guild: Guild;
  m: MemberSummary;
  open: boolean;
  onClose: () => void;
}) {
  const { guild, m } = props;
  const online = isOnline(m.user.id);
  const bot = guild.bots.includes(m.user.id);
  return (
    <Dialog title={m.user.name} open={props.open} onClose={props.onClose}>
      <div class="profile">
        <Avatar name={m.user.name} id={m.user.id} url={m.user.avatar} size={64} />
        <p>
          {bot ? 'Bot' : m.user.id === guild.ownerId ? 'Owner' : 'Member'} · joined{' '}
          {new Date(m.joinedAt).toLocaleDateString()} · {online ? 'online' : 'offline'}
        </p>
      </div>
      <div class="actions">
        {m.user.id !== me.value?.id && (
          <button
            type="button"
            class="btn primary"
            onClick={() => {
              props.onClose();
              void openDm(m.user.id);
            }}
          >
            <Icon name="chat" size={16} /> Send a message
          </button>
        )}
        {managesGuild(guild) && (
          <button
            type="button"
            class="btn"
            onClick={() => {
              props.onClose();
              navigate(`/g/${guild.id}/settings?tab=members`);
            }}
          >
            Manage in guild settings
          </button>
        )}
      </div>
      <MemberActions guild={guild} member={m} />
    </Dialog>
  );
}

function MemberRow({ m, guild }: { m: MemberSummary; guild: Guild }) {
  const [open, setOpen] = useState(false);
  const online = isOnline(m.user.id);
  const bot = guild.bots.includes(m.user.id);
  const color = nameColor(guild, m.roles); // D58: the top coloured role
  return (
    <li>
      <button type="button" class="member" onClick={() => setOpen(true)}>
        <span class="avatar-wrap">
          <Avatar name={m.user.name} id={m.user.id} url={m.user.avatar} size={28} />
          <span
            class={`presence ${online ? 'online' : 'offline'}`}
            role="img"
            aria-label={online ? 'online' : 'offline'}
          />
        </span>
        <span class="member-name" style={color ? { color } : undefined}>
          {m.user.name}
        </span>
        {bot && <span class="tag">BOT</span>}
        {m.user.id === guild.ownerId && <span class="muted small">owner</span>}
      </button>
      <MemberDialog guild={guild} m={m} open={open} onClose={() => setOpen(false)} />
    </li>
  );
}

/** Members with bots marked and presence dots (D51 PRESENCE_UPDATE). */
export function MembersPanel({ guild }: { guild: Guild }) {
  const list = members.value.get(guild.id) ?? [];
  const on = list.filter((m) => isOnline(m.user.id));
  const off = list.filter((m) => !isOnline(m.user.id));
  return (
    <aside class="members-panel" aria-label="Members">
      {[
        ['Online', on],
        ['Offline', off],
      ].map(([label, group]) =>
        (group as MemberSummary[]).length ? (
          <section key={label as string}>
            <h3 class="section-title">
              {label as string} — {(group as MemberSummary[]).length}
            </h3>
            <ul class="member-list">
              {(group as MemberSummary[]).map((m) => (
                <MemberRow key={m.user.id} m={m} guild={guild} />
              ))}
            </ul>
          </section>
        ) : null,
      )}
    </aside>
  );
}
