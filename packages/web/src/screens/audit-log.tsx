import { useCallback, useEffect, useState } from 'preact/hooks';
import { get } from '../lib/api.js';
import { Permission } from '@parley/protocol';
import { explain, hex, holds, permissionChange } from '../lib/permissions.js';
import type { Ban, Guild } from '../lib/types.js';
import type { AuditEntry } from '@parley/protocol';
import { loadMembers, members } from '../state/store.js';
import { formerNames } from '../state/names.js';
import { Spinner } from '../ui/kit.js';
import '../ui/moderation.css';
import { when } from '../lib/time.js';

/** D60's actions in the words a person reads. */
export const AUDIT_ACTIONS: Record<string, string> = {
  GUILD_UPDATE: 'Changed the guild',
  CHANNEL_CREATE: 'Created a channel',
  CHANNEL_UPDATE: 'Changed a channel',
  CHANNEL_DELETE: 'Deleted a channel',
  OVERWRITE_UPDATE: "Changed a channel's permissions",
  ROLE_CREATE: 'Created a role',
  ROLE_UPDATE: 'Changed a role',
  ROLE_DELETE: 'Deleted a role',
  MEMBER_ROLE_UPDATE: "Changed a member's roles",
  MEMBER_KICK: 'Kicked a member',
  MEMBER_BAN_ADD: 'Banned a member',
  MEMBER_BAN_REMOVE: 'Lifted a ban',
  MEMBER_TIMEOUT: 'Timed a member out',
  MESSAGE_DELETE: "Deleted a member's message",
  MESSAGE_PIN: 'Pinned a message',
  MESSAGE_UNPIN: 'Unpinned a message',
  INVITE_CREATE: 'Created an invite',
  INVITE_DELETE: 'Deleted an invite',
  BOT_ADD: 'Added a bot',
  COMMANDS_UPDATE: "Changed a bot's commands",
  OPERATOR_CHANGE: 'Made a change through the operator API',
};

/** D58: a reorder is one ROLE_UPDATE on the guild whose changes are `position:<roleId>`. */
const isReorder = (e: AuditEntry): boolean =>
  e.action === 'ROLE_UPDATE' &&
  e.changes.length > 0 &&
  e.changes.every((c) => c.key.startsWith('position:'));

const MEMBER_TARGETS = new Set([
  'MEMBER_ROLE_UPDATE',
  'MEMBER_KICK',
  'MEMBER_BAN_ADD',
  'MEMBER_BAN_REMOVE',
  'MEMBER_TIMEOUT',
  'MESSAGE_DELETE',
  'BOT_ADD',
]);

/** D57's bitfields in an entry's changes: a role's permissions, an overwrite's allow and deny. */
const PERMISSION_KEYS = new Map([
  ['permissions', 'permissions'],
  ['allow', 'allowed'],
  ['deny', 'denied'],
]);

/** "timeoutUntil" → "timeout until". */
const words = (key: string): string => key.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

/** An action's label after its actor's name: "mona kicked a member". */
const inSentence = (label: string): string => label.charAt(0).toLowerCase() + label.slice(1);

const show = (v: unknown): string =>
  v === undefined || v === null
    ? '—'
    : typeof v === 'string'
      ? /^\d{4}-\d{2}-\d{2}T/.test(v)
        ? when(v)
        : v
      : JSON.stringify(v);

/**
 * The guild's audit log (D60, VIEW_AUDIT_LOG): newest first, filtered by action and by who did
 * it, each entry with its reason and what changed; "Older" pages on with `before`.
 */
export function AuditLog({ guild }: { guild: Guild }) {
  const [action, setAction] = useState('');
  const [actor, setActor] = useState('');
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [refused, setRefused] = useState<string | null>(null);
  const list = members.value.get(guild.id);
  // Banned people are no longer members; the ban list (BAN_MEMBERS) still names them.
  const [banned, setBanned] = useState<Map<number, string>>(new Map());
  useEffect(() => {
    void loadMembers(guild.id).catch(() => {});
    if (holds(guild, Permission.BAN_MEMBERS))
      get<{ bans: Ban[] }>(`/app/v1/guilds/${guild.id}/bans`)
        .then((r) => setBanned(new Map(r.bans.map((b) => [b.user.id, b.user.name]))))
        .catch(() => {});
  }, [guild.id]);
  const page = useCallback(
    async (before?: number) => {
      const q = new URLSearchParams({ limit: '50' });
      if (action) q.set('action', action);
      if (actor) q.set('actorId', actor);
      if (before) q.set('before', String(before));
      try {
        const r = await get<{ entries: AuditEntry[]; hasMore: boolean }>(
          `/app/v1/guilds/${guild.id}/audit-log?${q}`,
        );
        setEntries((old) => (before ? [...(old ?? []), ...r.entries] : r.entries));
        setHasMore(r.hasMore);
        setRefused(null);
      } catch (x) {
        setRefused(explain(x));
        setEntries([]);
      }
    },
    [guild.id, action, actor],
  );
  useEffect(() => {
    setEntries(null);
    void page();
  }, [page]);
  const userName = (id: number | null): string => {
    if (id === null) return 'The operator';
    const m = list?.find((x) => x.user.id === id);
    return m?.user.name ?? formerNames.get(id) ?? banned.get(id) ?? `a former member (${id})`;
  };
  const roleName = (id: number): string =>
    id === guild.id
      ? '@everyone'
      : (guild.roles.find((r) => r.id === id)?.name ?? 'a deleted role');
  /**
   * A change as a person reads it: "key: old → new", or "key: what" where only the change itself
   * says something (role ids by name, permission bits by their names, added and taken away).
   */
  const change = (c: AuditEntry['changes'][number]): string => {
    if (c.key.startsWith('position:'))
      return `${roleName(Number(c.key.slice(9)))}: ${show(c.old)} → ${show(c.new)}`;
    if (c.key === 'roles') {
      const names = (v: unknown) =>
        Array.isArray(v) ? v.map((id) => roleName(Number(id))).join(', ') || 'none' : show(v);
      return c.old == null ? `roles: ${names(c.new)}` : `roles: ${names(c.old)} → ${names(c.new)}`;
    }
    // D60: the operator's request, as the operator API names it
    if (c.key === 'change') return `request: ${show(c.new)}`;
    // D57: the role a channel's overwrite is for
    if (c.key === 'roleId' && typeof c.new === 'number') return `for the role ${roleName(c.new)}`;
    if (PERMISSION_KEYS.has(c.key) && typeof c.new === 'number')
      return `${PERMISSION_KEYS.get(c.key)}: ${permissionChange(c.old, c.new)}`;
    const key = words(c.key);
    // nothing before (a creation, an operator's field): what it is now says it all
    if (c.old == null) return `${key}: ${show(c.new)}`;
    return `${key}: ${show(c.old)} → ${show(c.new)}`;
  };
  const target = (e: AuditEntry): string => {
    if (e.targetId === null || isReorder(e)) return '';
    if (MEMBER_TARGETS.has(e.action)) return userName(e.targetId);
    // an operator's change to a member (D60: the request names the route it went through)
    if (e.action === 'OPERATOR_CHANGE' && e.changes.some((c) => String(c.new).includes(':userId')))
      return userName(e.targetId);
    const role = guild.roles.find((r) => r.id === e.targetId);
    if (role) return role.id === guild.id ? '@everyone' : role.name;
    const ch = guild.channels.find((c) => c.id === e.targetId);
    if (ch) return `#${ch.name}`;
    if (e.targetId === guild.id) return guild.name;
    return '';
  };
  return (
    <section class="card">
      <h2>Audit log</h2>
      <div class="audit-filters">
        <label class="inline">
          <span>Action</span>
          <select
            aria-label="Filter by action"
            value={action}
            onChange={(e) => setAction(e.currentTarget.value)}
          >
            <option value="">All actions</option>
            {Object.entries(AUDIT_ACTIONS).map(([k, l]) => (
              <option key={k} value={k}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <label class="inline">
          <span>By</span>
          <select
            aria-label="Filter by who did it"
            value={actor}
            onChange={(e) => setActor(e.currentTarget.value)}
          >
            <option value="">Anyone</option>
            {(list ?? []).map((m) => (
              <option key={m.user.id} value={String(m.user.id)}>
                {m.user.name}
                {m.user.isBot ? ' (bot)' : ''}
              </option>
            ))}
          </select>
        </label>
      </div>
      {refused && (
        <p class="refusal" role="alert">
          {refused}
        </p>
      )}
      {entries === null ? (
        <Spinner />
      ) : entries.length === 0 ? (
        <p class="muted">Nothing here{action || actor ? ' with these filters' : ''}.</p>
      ) : (
        <ul class="admin-list audit-list">
          {entries.map((e) => (
            <li key={e.id} class="admin-row audit-entry" data-action={e.action}>
              <time class="muted small" dateTime={e.createdAt}>
                {when(e.createdAt)}
              </time>
              <div>
                <div>
                  <strong>{userName(e.actorId)}</strong>
                  {e.actorType === 'bot' && <span class="tag">BOT</span>}{' '}
                  <span class="audit-what">
                    {isReorder(e)
                      ? 'reordered roles'
                      : inSentence(AUDIT_ACTIONS[e.action] ?? e.action)}
                  </span>{' '}
                  {target(e) && <span class="audit-target">{target(e)}</span>}
                </div>
                {e.reason !== null && <div class="audit-reason">Reason: {e.reason}</div>}
                {e.changes.length > 0 && (
                  <ul class="audit-changes small muted">
                    {e.changes.map((c, i) => (
                      <li key={i}>
                        {c.key === 'color' && typeof c.new === 'number' ? (
                          <>
                            colour: <span style={{ color: hex(c.new) }}>{hex(c.new)}</span>
                          </>
                        ) : (
                          change(c)
                        )}
                      </li>
                    ))}
                  </ul>
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
      {hasMore && entries && entries.length > 0 && (
        <button
          type="button"
          class="btn"
          onClick={() => void page(entries[entries.length - 1]?.id)}
        >
          Older entries
        </button>
      )}
    </section>
  );
}
