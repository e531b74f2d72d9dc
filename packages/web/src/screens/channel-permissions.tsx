import { Permission } from '@parley/protocol';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { get, put } from '../lib/api.js';
import { explain, PERMISSION_LABELS, PERMISSION_NAMES } from '../lib/permissions.js';
import type { Guild } from '../lib/types.js';
import { refreshGuild } from '../state/store.js';
import { Spinner } from '../ui/kit.js';
import { toast } from '../ui/toast.js';
import '../ui/moderation.css';

interface Overwrite {
  roleId: number;
  allow: number;
  deny: number;
}
type Choice = 'allow' | 'neutral' | 'deny';

/** ADMINISTRATOR is never overwritten (it is not a channel's to give or take, D11). */
const CHANNEL_BITS = PERMISSION_NAMES.filter((k) => k !== 'ADMINISTRATOR');

/**
 * A channel's "Permissions" tab (D11, D57 MANAGE_CHANNELS): for each role, each bit allowed,
 * neutral (the role's own permissions decide) or denied in this channel. Overwrites never limit
 * the owner or administrators. Overwrites are per role (D11); members get theirs through roles.
 */
export function ChannelPermissions(props: { guild: Guild; channelId: number }) {
  const { guild, channelId } = props;
  const [list, setList] = useState<Overwrite[] | null>(null);
  const [roleId, setRoleId] = useState<number>(guild.id);
  const [draft, setDraft] = useState<{ allow: number; deny: number }>({ allow: 0, deny: 0 });
  const [refused, setRefused] = useState<string | null>(null);
  const load = useCallback(() => {
    get<{ overwrites: Overwrite[] }>(`/app/v1/channels/${channelId}/overwrites`)
      .then((r) => setList(r.overwrites))
      .catch((x) => setRefused(explain(x)));
  }, [channelId]);
  useEffect(load, [load]);
  useEffect(() => {
    const o = list?.find((x) => x.roleId === roleId);
    setDraft({ allow: o?.allow ?? 0, deny: o?.deny ?? 0 });
  }, [list, roleId]);
  if (list === null) return refused ? <p class="refusal">{refused}</p> : <Spinner />;
  const roles = [...guild.roles].sort((a, b) => b.position - a.position);
  const choice = (bit: number): Choice =>
    draft.allow & bit ? 'allow' : draft.deny & bit ? 'deny' : 'neutral';
  const set = (bit: number, c: Choice) =>
    setDraft({
      allow: c === 'allow' ? draft.allow | bit : draft.allow & ~bit,
      deny: c === 'deny' ? draft.deny | bit : draft.deny & ~bit,
    });
  const roleName = (id: number) => guild.roles.find((r) => r.id === id)?.name ?? 'role';
  return (
    <div class="channel-perms">
      <p class="muted small">
        Allowed or denied here wins over what a role gives in the whole guild; neutral leaves it to
        the role. Roles with an overwrite:{' '}
        {list.length === 0 ? 'none yet' : list.map((o) => roleName(o.roleId)).join(', ')}.
      </p>
      <label class="inline">
        <span>Role</span>
        <select
          aria-label="Role to edit"
          value={String(roleId)}
          onChange={(e) => setRoleId(Number(e.currentTarget.value))}
        >
          {roles.map((r) => (
            <option key={r.id} value={String(r.id)}>
              {r.name}
              {list.some((o) => o.roleId === r.id) ? ' •' : ''}
            </option>
          ))}
        </select>
      </label>
      <table class="ow-table">
        <thead>
          <tr>
            <th>Permission</th>
            <th>In this channel</th>
          </tr>
        </thead>
        <tbody>
          {CHANNEL_BITS.map((k) => {
            const bit = Permission[k];
            return (
              <tr key={k}>
                <td>
                  <div class="perm-name">{PERMISSION_LABELS[k].label}</div>
                  <div class="muted small">{PERMISSION_LABELS[k].help}</div>
                </td>
                <td class="ow-choice" role="radiogroup" aria-label={PERMISSION_LABELS[k].label}>
                  {(['allow', 'neutral', 'deny'] as const).map((c) => (
                    <label key={c} class="check">
                      <input
                        type="radio"
                        name={`ow-${k}`}
                        checked={choice(bit) === c}
                        onChange={() => set(bit, c)}
                      />
                      <span>{c === 'allow' ? 'Allow' : c === 'deny' ? 'Deny' : 'Neutral'}</span>
                    </label>
                  ))}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {refused && (
        <p class="refusal" role="alert">
          {refused}
        </p>
      )}
      <div class="actions">
        <button
          type="button"
          class="btn primary"
          onClick={async () => {
            setRefused(null);
            try {
              await put(`/app/v1/channels/${channelId}/overwrites/${roleId}`, draft);
              toast(`Permissions of ${roleName(roleId)} saved`, 'info');
              load();
              await refreshGuild(guild.id);
            } catch (x) {
              setRefused(explain(x));
            }
          }}
        >
          Save for {roleName(roleId)}
        </button>
      </div>
    </div>
  );
}
