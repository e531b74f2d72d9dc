import { Permission } from '@parley/protocol';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, del, describe, get, patch, post, put } from '../lib/api.js';
import { navigate, path } from '../lib/router.js';
import type { Ban, Guild, Invite, MemberSummary } from '../lib/types.js';
import { guilds, loadMembers, me, members, refreshGuild } from '../state/store.js';
import { explain, holds, nameColor } from '../lib/permissions.js';
import { Avatar, Confirm, CopyButton, Dialog, Field, Spinner, val } from '../ui/kit.js';
import { toast } from '../ui/toast.js';
import { AuditLog } from './audit-log.js';
import { ChannelPermissions } from './channel-permissions.js';
import { MemberActions, moderationRights } from './member-menu.js';
import { Roles } from './roles.js';
import { day, when } from '../lib/time.js';

export function CreateGuild() {
  const [name, setName] = useState('');
  const [err, setErr] = useState<ApiError | null>(null);
  return (
    <div class="page">
      <section class="card">
        <h2>Create a guild</h2>
        <form
          class="form"
          onSubmit={async (e) => {
            e.preventDefault();
            try {
              // D49: the creator owns it; it starts with #general; GUILD_CREATE adds it here.
              const g = await post<Guild>('/app/v1/guilds', { name: name.trim() });
              await refreshGuild(g.id);
              navigate(`/g/${g.id}`);
            } catch (x) {
              if (x instanceof ApiError) setErr(x);
              else toast(describe(x));
            }
          }}
        >
          <Field label="Guild name" error={err ? (err.field('name') ?? err.message) : undefined}>
            {(id, d) => (
              <input
                id={id}
                aria-describedby={d}
                required
                maxLength={100}
                value={name}
                onInput={(e) => setName(val(e))}
              />
            )}
          </Field>
          <button class="btn primary" type="submit">
            Create guild
          </button>
        </form>
      </section>
    </div>
  );
}

const TABS = ['general', 'channels', 'roles', 'members', 'invites', 'bans', 'audit'] as const;
type Tab = (typeof TABS)[number];
/** D57: the bit(s) a tab's actions need; a tab the viewer can do nothing in is not shown. */
const TAB_BITS: Record<Tab, number> = {
  general: Permission.MANAGE_GUILD,
  channels: Permission.MANAGE_CHANNELS,
  roles: Permission.MANAGE_ROLES,
  members: Permission.MANAGE_ROLES | Permission.KICK_MEMBERS | Permission.BAN_MEMBERS,
  invites: Permission.MANAGE_GUILD,
  bans: Permission.BAN_MEMBERS,
  audit: Permission.VIEW_AUDIT_LOG,
};
const TAB_LABELS: Partial<Record<Tab, string>> = { audit: 'Audit log' };

export function GuildAdmin({ guild }: { guild: Guild }) {
  const q = new URLSearchParams(path.value.split('?')[1] ?? '');
  const tabs = TABS.filter((t) => guild.ownerId === me.value?.id || holds(guild, TAB_BITS[t]));
  const tab = (tabs as readonly string[]).includes(q.get('tab') ?? '')
    ? (q.get('tab') as Tab)
    : (tabs[0] ?? 'general');
  return (
    <div class="page">
      <div class="tabs" role="tablist" aria-label="Guild settings">
        {tabs.map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            aria-selected={t === tab}
            class={t === tab ? 'on' : ''}
            onClick={() => navigate(`/g/${guild.id}/settings?tab=${t}`, true)}
          >
            {TAB_LABELS[t] ?? t[0]!.toUpperCase() + t.slice(1)}
          </button>
        ))}
      </div>
      {tab === 'general' && <General guild={guild} />}
      {tab === 'channels' && <Channels guild={guild} />}
      {tab === 'roles' && <Roles guild={guild} />}
      {tab === 'members' && <Members guild={guild} />}
      {tab === 'invites' && <Invites guild={guild} />}
      {tab === 'bans' && <Bans guild={guild} />}
      {tab === 'audit' && <AuditLog guild={guild} />}
    </div>
  );
}

function General({ guild }: { guild: Guild }) {
  const [name, setName] = useState(guild.name);
  const [confirm, setConfirm] = useState(false);
  return (
    <section class="card">
      <h2>General</h2>
      <form
        class="form row"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            await patch(`/app/v1/guilds/${guild.id}`, { name: name.trim() });
            await refreshGuild(guild.id);
            toast('Saved', 'info');
          } catch (x) {
            toast(describe(x));
          }
        }}
      >
        <Field label="Guild name">
          {(id) => <input id={id} value={name} onInput={(e) => setName(val(e))} />}
        </Field>
        <button class="btn primary" type="submit">
          Rename
        </button>
      </form>
      {guild.ownerId === me.value?.id && (
        <div class="danger-zone">
          <button type="button" class="btn danger" onClick={() => setConfirm(true)}>
            Delete guild
          </button>
        </div>
      )}
      <Confirm
        open={confirm}
        title={`Delete ${guild.name}?`}
        body="Every channel and message goes with it. This cannot be undone."
        confirm="Delete guild"
        danger
        onConfirm={async () => {
          try {
            await del(`/app/v1/guilds/${guild.id}`);
            navigate('/', true);
          } catch (x) {
            toast(describe(x));
          }
          setConfirm(false);
        }}
        onClose={() => setConfirm(false)}
      />
    </section>
  );
}

function Channels({ guild }: { guild: Guild }) {
  const [name, setName] = useState('');
  const [topic, setTopic] = useState('');
  const [err, setErr] = useState<ApiError | null>(null);
  const [removing, setRemoving] = useState<number | null>(null);
  return (
    <section class="card">
      <h2>Channels</h2>
      <ul class="admin-list">
        {guild.channels.map((c) => (
          <ChannelRow key={c.id} guildId={guild.id} c={c} onDelete={() => setRemoving(c.id)} />
        ))}
      </ul>
      <h3>New channel</h3>
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setErr(null);
          try {
            await post(
              `/app/v1/guilds/${guild.id}/channels`,
              topic ? { name: name.trim(), topic } : { name: name.trim() },
            );
            setName('');
            setTopic('');
            await refreshGuild(guild.id);
          } catch (x) {
            if (x instanceof ApiError) setErr(x);
            else toast(describe(x));
          }
        }}
      >
        <Field label="Channel name" error={err ? (err.field('name') ?? err.message) : undefined}>
          {(id, d) => (
            <input
              id={id}
              aria-describedby={d}
              required
              value={name}
              onInput={(e) => setName(val(e))}
            />
          )}
        </Field>
        <Field label="Topic (optional)" error={err?.field('topic')}>
          {(id, d) => (
            <input id={id} aria-describedby={d} value={topic} onInput={(e) => setTopic(val(e))} />
          )}
        </Field>
        <button class="btn primary" type="submit">
          Create channel
        </button>
      </form>
      <Confirm
        open={removing !== null}
        title="Delete this channel?"
        body="Its messages are deleted with it."
        confirm="Delete channel"
        danger
        onConfirm={async () => {
          try {
            await del(`/app/v1/channels/${removing}`);
            await refreshGuild(guild.id);
          } catch (x) {
            toast(describe(x));
          }
          setRemoving(null);
        }}
        onClose={() => setRemoving(null)}
      />
    </section>
  );
}

function ChannelRow(props: {
  guildId: number;
  c: Guild['channels'][number];
  onDelete: () => void;
}) {
  const [name, setName] = useState(props.c.name);
  const [topic, setTopic] = useState(props.c.topic ?? '');
  const [perms, setPerms] = useState(false);
  const guild = guilds.value.get(props.guildId);
  const changed = name !== props.c.name || topic !== (props.c.topic ?? '');
  return (
    <li class="admin-row">
      <form
        class="row"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            await patch(`/app/v1/channels/${props.c.id}`, { name: name.trim(), topic });
            await refreshGuild(props.guildId);
          } catch (x) {
            toast(describe(x));
          }
        }}
      >
        <label class="inline">
          <span class="sr-only">Name of #{props.c.name}</span>
          <input value={name} onInput={(e) => setName(val(e))} />
        </label>
        <label class="inline grow">
          <span class="sr-only">Topic of #{props.c.name}</span>
          <input value={topic} placeholder="Topic" onInput={(e) => setTopic(val(e))} />
        </label>
        <button class="btn small" type="submit" disabled={!changed}>
          Save
        </button>
        <button
          type="button"
          class="btn small"
          onClick={() => setPerms(true)}
          aria-label={`Permissions of #${props.c.name}`}
        >
          Permissions
        </button>
        <button
          type="button"
          class="btn small danger"
          onClick={props.onDelete}
          aria-label={`Delete #${props.c.name}`}
        >
          Delete
        </button>
      </form>
      {guild && (
        <Dialog
          title={`#${props.c.name} — Permissions`}
          open={perms}
          wide
          onClose={() => setPerms(false)}
        >
          <ChannelPermissions guild={guild} channelId={props.c.id} />
        </Dialog>
      )}
    </li>
  );
}

function MemberAdmin({ guild, m }: { guild: Guild; m: MemberSummary }) {
  const userId = m.user.id;
  const name = m.user.name;
  const roles = guild.roles.filter((r) => r.id !== guild.id);
  const setRole = async (roleId: number, on: boolean) => {
    const held = m.roles ?? [];
    const next = on ? [...held, roleId] : held.filter((r) => r !== roleId);
    try {
      await put(`/app/v1/guilds/${guild.id}/members/${userId}/roles`, { roles: next });
      void loadMembers(guild.id, true);
    } catch (x) {
      toast(explain(x));
    }
  };
  const owner = userId === guild.ownerId;
  const color = nameColor(guild, m.roles);
  const rights = moderationRights(guild, m);
  const timedOut = m.timeoutUntil !== undefined && Date.parse(m.timeoutUntil) > Date.now();
  return (
    <li class="admin-row member-admin" data-user={userId}>
      <div class="row">
        <Avatar name={name} id={userId} url={m.user.avatar} size={28} />
        <strong class="grow" style={color ? { color } : undefined}>
          {name}
        </strong>
        {guild.bots.includes(userId) && <span class="tag">BOT</span>}
        {owner && <span class="muted small">owner</span>}
      </div>
      {roles.length > 0 && m.roles && holds(guild, Permission.MANAGE_ROLES) && (
        <fieldset class="perms">
          <legend class="small muted">Roles of {name}</legend>
          {roles.map((r) => (
            <label key={r.id} class="check">
              <input
                type="checkbox"
                checked={m.roles?.includes(r.id) ?? false}
                onChange={(e) => void setRole(r.id, e.currentTarget.checked)}
              />
              <span>{r.name}</span>
            </label>
          ))}
        </fieldset>
      )}
      {/* a long member list stays a list: each one's moderation opens when wanted (a member
          timed out shows it open, with the time-out's end) */}
      {(rights.timeout || rights.kick || rights.ban) && (
        <details class="member-moderate" open={timedOut}>
          <summary>Moderate {name}</summary>
          <MemberActions guild={guild} member={m} />
        </details>
      )}
    </li>
  );
}

function Members({ guild }: { guild: Guild }) {
  const list = members.value.get(guild.id);
  useEffect(() => {
    void loadMembers(guild.id).catch((x) => toast(describe(x)));
  }, [guild.id]);
  if (!list) return <Spinner />;
  return (
    <section class="card">
      <h2>Members ({list.length})</h2>
      <ul class="admin-list">
        {list.map((m) => (
          <MemberAdmin key={m.user.id} guild={guild} m={m} />
        ))}
      </ul>
    </section>
  );
}

const EXPIRY: Array<[string, number | null]> = [
  ['30 minutes', 1800],
  ['1 hour', 3600],
  ['1 day', 86400],
  ['7 days', 604800],
  ['Never', null],
];

function Invites({ guild }: { guild: Guild }) {
  const [list, setList] = useState<Invite[] | null>(null);
  const [expiry, setExpiry] = useState('86400');
  const [uses, setUses] = useState('0');
  const load = useCallback(() => {
    get<{ invites: Invite[] }>(`/app/v1/guilds/${guild.id}/invites`)
      .then((r) => setList(r.invites))
      .catch((x) => toast(describe(x)));
  }, [guild.id]);
  useEffect(load, [load]);
  return (
    <section class="card">
      <h2>Invites</h2>
      <form
        class="form row"
        onSubmit={async (e) => {
          e.preventDefault();
          const body: Record<string, number> = {};
          if (expiry !== '') body['expiresInS'] = Number(expiry);
          if (uses !== '0') body['maxUses'] = Number(uses);
          try {
            await post(`/app/v1/guilds/${guild.id}/invites`, body);
            load();
          } catch (x) {
            toast(describe(x));
          }
        }}
      >
        <label class="inline">
          <span>Expires after</span>
          <select value={expiry} onChange={(e) => setExpiry(val(e))}>
            {EXPIRY.map(([l, s]) => (
              <option key={l} value={s === null ? '' : String(s)}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <label class="inline">
          <span>Uses</span>
          <select value={uses} onChange={(e) => setUses(val(e))}>
            {['0', '1', '5', '10', '25', '100'].map((u) => (
              <option key={u} value={u}>
                {u === '0' ? 'No limit' : u}
              </option>
            ))}
          </select>
        </label>
        <button class="btn primary" type="submit">
          Create invite
        </button>
      </form>
      {list === null ? (
        <Spinner />
      ) : list.length === 0 ? (
        <p class="muted">No invites.</p>
      ) : (
        <ul class="admin-list">
          {list.map((i) => (
            <li key={i.code} class="admin-row">
              <div class="row">
                <code class="grow invite-url">{i.url}</code>
                <span class="muted small">
                  {i.uses}
                  {i.maxUses ? `/${i.maxUses}` : ''} {(i.maxUses || i.uses) === 1 ? 'use' : 'uses'}{' '}
                  · {i.expiresAt ? `until ${when(i.expiresAt)}` : 'no expiry'}
                </span>
                <CopyButton text={i.url} label="Copy link" />
                <button
                  type="button"
                  class="btn small danger"
                  onClick={async () => {
                    try {
                      await del(`/app/v1/invites/${encodeURIComponent(i.code)}`);
                      load();
                    } catch (x) {
                      toast(describe(x));
                    }
                  }}
                >
                  Revoke
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Bans({ guild }: { guild: Guild }) {
  const [list, setList] = useState<Ban[] | null>(null);
  const load = useCallback(() => {
    get<{ bans: Ban[] }>(`/app/v1/guilds/${guild.id}/bans`)
      .then((r) => setList(r.bans))
      .catch((x) => toast(describe(x)));
  }, [guild.id]);
  useEffect(load, [load]);
  if (!list) return <Spinner />;
  return (
    <section class="card">
      <h2>Bans</h2>
      {list.length === 0 && <p class="muted">Nobody is banned.</p>}
      <ul class="admin-list">
        {list.map((b) => (
          <li key={b.user.id} class="admin-row">
            <div class="row">
              <Avatar name={b.user.name} id={b.user.id} url={b.user.avatar} size={28} />
              <strong class="grow">{b.user.name}</strong>
              <span class="muted small">since {day(b.createdAt)}</span>
              <button
                type="button"
                class="btn small"
                onClick={async () => {
                  try {
                    await del(`/app/v1/guilds/${guild.id}/bans/${b.user.id}`);
                    load();
                  } catch (x) {
                    toast(describe(x));
                  }
                }}
              >
                Unban {b.user.name}
              </button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
