import { Permission } from '@parley/protocol';
import { useEffect, useState } from 'preact/hooks';
import '../ui/moderation.css';
import { del, patch, post } from '../lib/api.js';
import {
  explain,
  hex,
  holds,
  PERMISSION_LABELS,
  PERMISSION_NAMES,
  rankOf,
} from '../lib/permissions.js';
import type { Guild, MemberSummary, Role } from '../lib/types.js';
import { loadMembers, me, members, refreshGuild } from '../state/store.js';
import { Confirm, Field, val } from '../ui/kit.js';
import { toast } from '../ui/toast.js';

/**
 * The role editor (D57–D58): every bit by its plain name with what it allows, colour,
 * mentionable, and the rank order — highest first, moved with up/down. What the server refuses
 * by rank is said in plain words above the list.
 */
export function PermissionBoxes(props: { value: number; onChange: (v: number) => void }) {
  return (
    <fieldset class="perms perms-explained">
      <legend class="sr-only">Permissions</legend>
      {PERMISSION_NAMES.map((k) => (
        <label key={k} class="check perm">
          <input
            type="checkbox"
            checked={(props.value & Permission[k]) !== 0}
            onChange={(e) =>
              props.onChange(
                e.currentTarget.checked
                  ? props.value | Permission[k]
                  : props.value & ~Permission[k],
              )
            }
          />
          <span>
            <span class="perm-name">{PERMISSION_LABELS[k].label}</span>
            <span class="perm-help muted small">{PERMISSION_LABELS[k].help}</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}

/** My rank in this guild (D58), from the members list read with roles. */
function myRank(guild: Guild, list: readonly MemberSummary[] | undefined): number {
  const id = me.value?.id ?? 0;
  return rankOf(guild, id, list?.find((m) => m.user.id === id)?.roles);
}

function RoleRow(props: {
  guild: Guild;
  role: Role;
  top: boolean;
  bottom: boolean;
  mine: number;
  onRefused: (why: string | null) => void;
}) {
  const { guild, role } = props;
  const [name, setName] = useState(role.name);
  const [perms, setPerms] = useState(role.permissions);
  const [color, setColor] = useState<number | null>(role.color);
  const [mentionable, setMentionable] = useState(role.mentionable);
  const [confirm, setConfirm] = useState(false);
  const everyone = role.id === guild.id; // D11: @everyone's id is the guild's
  const below = role.position < props.mine;
  const act = async (f: () => Promise<unknown>, done?: string) => {
    props.onRefused(null);
    try {
      await f();
      await refreshGuild(guild.id);
      if (done) toast(done, 'info');
    } catch (x) {
      props.onRefused(explain(x));
    }
  };
  // D58: a move swaps places with the neighbour (the server renumbers 1…n).
  const move = (by: 1 | -1) =>
    act(() =>
      patch(`/app/v1/guilds/${guild.id}/roles`, [{ id: role.id, position: role.position + by }]),
    );
  const save = (e: Event) => {
    e.preventDefault();
    const body = everyone
      ? { permissions: perms }
      : { name: name.trim(), permissions: perms, color, mentionable };
    void act(() => patch(`/app/v1/roles/${role.id}`, body), 'Role saved');
  };
  return (
    <li class="admin-row role" data-role={role.id} data-name={role.name}>
      <form onSubmit={save}>
        <div class="row role-head">
          <span
            class="role-dot"
            style={{ background: color === null ? 'var(--fg-2)' : hex(color) }}
            aria-hidden="true"
          />
          <label class="inline grow">
            <span class="sr-only">Name of role {role.name}</span>
            <input
              class="role-name"
              value={name}
              disabled={everyone}
              style={color === null ? undefined : { color: hex(color) }}
              onInput={(e) => setName(val(e))}
            />
          </label>
          <span class="muted small">{everyone ? 'everyone' : `rank ${role.position}`}</span>
          {!everyone && (
            <>
              <button
                type="button"
                class="btn small"
                disabled={props.top}
                aria-label={`Move ${role.name} up`}
                onClick={() => void move(1)}
              >
                ↑
              </button>
              <button
                type="button"
                class="btn small"
                disabled={props.bottom}
                aria-label={`Move ${role.name} down`}
                onClick={() => void move(-1)}
              >
                ↓
              </button>
            </>
          )}
          <button class="btn small primary" type="submit">
            Save {role.name}
          </button>
        </div>
        <details>
          <summary>
            Edit {role.name}
            {!below && !everyone && <span class="muted small"> · at or above your rank</span>}
          </summary>
          {!everyone && (
            <div class="row">
              <label class="inline">
                <span>Colour</span>
                <input
                  type="color"
                  value={hex(color ?? 0x99aab5)}
                  aria-label={`Colour of ${role.name}`}
                  onInput={(e) => setColor(parseInt(val(e).slice(1), 16))}
                />
              </label>
              <label class="check">
                <input
                  type="checkbox"
                  checked={color === null}
                  onChange={(e) => setColor(e.currentTarget.checked ? null : 0x99aab5)}
                />
                <span>No colour</span>
              </label>
              <label class="check">
                <input
                  type="checkbox"
                  checked={mentionable}
                  onChange={(e) => setMentionable(e.currentTarget.checked)}
                />
                <span>Anyone may @mention it</span>
              </label>
            </div>
          )}
          <PermissionBoxes value={perms} onChange={setPerms} />
          {!everyone && (
            <div class="row">
              <button type="button" class="btn small danger" onClick={() => setConfirm(true)}>
                Delete {role.name}
              </button>
            </div>
          )}
        </details>
      </form>
      <Confirm
        open={confirm}
        title={`Delete role ${role.name}?`}
        body="Members lose what it gave them."
        confirm="Delete role"
        danger
        onConfirm={async () => {
          await act(() => del(`/app/v1/roles/${role.id}`));
          setConfirm(false);
        }}
        onClose={() => setConfirm(false)}
      />
    </li>
  );
}

export function Roles({ guild }: { guild: Guild }) {
  const [name, setName] = useState('');
  const [perms, setPerms] = useState(
    Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.READ_MESSAGE_HISTORY,
  );
  const [refused, setRefused] = useState<string | null>(null);
  useEffect(() => {
    void loadMembers(guild.id).catch(() => {});
  }, [guild.id]);
  const mine = myRank(guild, members.value.get(guild.id));
  // Highest first, as they rank; @everyone last.
  const ordered = [...guild.roles].sort((a, b) => b.position - a.position);
  const highest = ordered[0]?.position ?? 0;
  return (
    <section class="card">
      <h2>Roles</h2>
      <p class="muted small">
        Higher roles outrank lower ones. A member’s rank is their highest role; the owner outranks
        everyone. You can edit, move, give and take only roles below your own highest role, and
        kick, ban or time out only members ranked below you
        {holds(guild, Permission.ADMINISTRATOR) && ' — Administrator does not change that'}.
      </p>
      {refused && (
        <p class="refusal" role="alert">
          {refused}
        </p>
      )}
      <ul class="admin-list">
        {ordered.map((r) => (
          <RoleRow
            key={`${r.id}-${r.permissions}-${r.name}-${r.position}-${r.color}-${r.mentionable}`}
            guild={guild}
            role={r}
            top={r.position === highest}
            bottom={r.position <= 1}
            mine={mine}
            onRefused={setRefused}
          />
        ))}
      </ul>
      <h3>New role</h3>
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setRefused(null);
          try {
            await post(`/app/v1/guilds/${guild.id}/roles`, {
              name: name.trim(),
              permissions: perms,
            });
            setName('');
            await refreshGuild(guild.id);
          } catch (x) {
            setRefused(explain(x));
          }
        }}
      >
        <Field label="New role name">
          {(id) => <input id={id} required value={name} onInput={(e) => setName(val(e))} />}
        </Field>
        <PermissionBoxes value={perms} onChange={setPerms} />
        <button class="btn primary" type="submit">
          Create role
        </button>
      </form>
    </section>
  );
}
