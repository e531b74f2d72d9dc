import { Permission, type PermissionName } from '@parley/protocol';
import { ApiError, describe } from './api.js';
import type { Guild, MemberSummary, Role } from './types.js';

/**
 * D11 + D57: every permission bit with the name a person reads and what it allows — the one
 * table the role editor, a channel's "Permissions" tab and the explanations all read.
 */
export const PERMISSION_LABELS: Record<PermissionName, { label: string; help: string }> = {
  VIEW_CHANNEL: { label: 'See channels', help: 'See a channel in the list and its new messages.' },
  SEND_MESSAGES: { label: 'Send messages', help: 'Write in channels (and show typing).' },
  READ_MESSAGE_HISTORY: {
    label: 'Read message history',
    help: 'Scroll back to messages sent before they opened the channel.',
  },
  ADMINISTRATOR: {
    label: 'Administrator',
    help: 'Every permission, in every channel. It does not raise rank: they still act only on members ranked below them.',
  },
  MANAGE_MESSAGES: {
    label: 'Manage messages',
    help: "Delete other people's messages, pin and unpin, remove others' reactions.",
  },
  MANAGE_CHANNELS: {
    label: 'Manage channels',
    help: "Create, rename and delete channels, and edit a channel's permissions.",
  },
  MANAGE_ROLES: {
    label: 'Manage roles',
    help: 'Create, edit, reorder and delete roles below their own, and give or take them.',
  },
  KICK_MEMBERS: {
    label: 'Kick members',
    help: 'Remove members ranked below them; an invite lets them back.',
  },
  BAN_MEMBERS: {
    label: 'Ban members',
    help: 'Remove members ranked below them for good, until the ban is lifted.',
  },
  MANAGE_GUILD: {
    label: 'Manage the guild',
    help: "Rename the guild and see or revoke everyone's invites.",
  },
  CREATE_INVITE: { label: 'Create invites', help: 'Make invite links to this guild.' },
  ADD_REACTIONS: { label: 'Add reactions', help: 'React to messages with emoji.' },
  ATTACH_FILES: { label: 'Attach files', help: 'Send images, sounds, videos and files.' },
  MENTION_EVERYONE: {
    label: 'Mention everyone',
    help: 'Notify @everyone, @here and roles that are not mentionable.',
  },
  VIEW_AUDIT_LOG: {
    label: 'View the audit log',
    help: 'See who changed or removed what, and why.',
  },
  USE_APPLICATION_COMMANDS: {
    label: "Use bots' commands",
    help: 'Run the slash commands of bots in this guild.',
  },
  MODERATE_MEMBERS: {
    label: 'Time members out',
    help: 'Let members ranked below them only read, for up to 28 days.',
  },
};

export const PERMISSION_NAMES = Object.keys(Permission) as PermissionName[];

/** The permissions a bitfield holds, by the names a person reads ("See channels, Send messages"). */
export const permissionLabels = (bits: number): string[] =>
  PERMISSION_NAMES.filter((k) => (bits & Permission[k]) !== 0).map(
    (k) => PERMISSION_LABELS[k].label,
  );

/**
 * A bitfield's change as a person reads it (the audit log, D60): what was added and what was
 * taken away — "+ See channels · − Manage messages" — or, with nothing before, what it holds.
 */
export function permissionChange(old: unknown, now: unknown): string {
  if (typeof now !== 'number') return '—';
  if (typeof old !== 'number') return permissionLabels(now).join(', ') || 'none';
  const added = permissionLabels(now & ~old);
  const removed = permissionLabels(old & ~now);
  const parts = [
    ...(added.length ? [`+ ${added.join(', ')}`] : []),
    ...(removed.length ? [`− ${removed.join(', ')}`] : []),
  ];
  return parts.join(' · ') || 'unchanged';
}

/** The viewer holds `bit` in the guild (the owner and ADMINISTRATOR hold every bit, D57). */
export const holds = (g: Guild, bit: number): boolean =>
  (g.myPermissions & (bit | Permission.ADMINISTRATOR)) !== 0;

/** Any right of guild administration: the guild's settings are worth opening (D59). */
export const ADMIN_BITS =
  Permission.ADMINISTRATOR |
  Permission.MANAGE_GUILD |
  Permission.MANAGE_CHANNELS |
  Permission.MANAGE_ROLES |
  Permission.KICK_MEMBERS |
  Permission.BAN_MEMBERS |
  Permission.MODERATE_MEMBERS |
  Permission.VIEW_AUDIT_LOG;

/** #rrggbb for a role colour (0xRRGGBB, D58). */
export const hex = (c: number): string => '#' + c.toString(16).padStart(6, '0');

type Ranked = Pick<Role, 'id' | 'position'> & { color?: number | null };

/**
 * D58: a member's rank — their highest role's position (0 with @everyone alone); the owner
 * outranks everyone.
 */
export function rankOf(g: Guild, userId: number, roles: readonly number[] | undefined): number {
  if (userId === g.ownerId) return Number.POSITIVE_INFINITY;
  let top = 0;
  for (const r of g.roles as Ranked[])
    if (roles?.includes(r.id) && r.position > top) top = r.position;
  return top;
}

/** D58: a name's colour — the colour of the member's highest coloured role, if any. */
export function nameColor(g: Guild, roles: readonly number[] | undefined): string | undefined {
  let best: Ranked | undefined;
  for (const r of g.roles as Ranked[])
    if (roles?.includes(r.id) && r.color != null && (!best || r.position > best.position)) best = r;
  return best?.color != null ? hex(best.color) : undefined;
}

/** Each member's name colour by user id (the members list read `withRoles`). */
export function nameColors(g: Guild, list: readonly MemberSummary[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const m of list) {
    const c = nameColor(g, m.roles);
    if (c) out.set(m.user.id, c);
  }
  return out;
}

/**
 * D58: may the viewer use `bit` on this member? They must hold the bit and outrank them; nobody
 * acts on the owner or on themselves this way.
 */
export function mayActOn(
  g: Guild,
  viewer: { id: number; roles: readonly number[] | undefined },
  target: { id: number; roles: readonly number[] | undefined },
  bit: number,
): boolean {
  if (target.id === viewer.id || target.id === g.ownerId) return false;
  if (!holds(g, bit)) return false;
  return rankOf(g, target.id, target.roles) < rankOf(g, viewer.id, viewer.roles);
}

/** The server refused by rank (D58: 403 FORBIDDEN whose message names the rule). */
export const isRankRefusal = (x: unknown): boolean =>
  x instanceof ApiError &&
  x.status === 403 &&
  /ranked below|not below your highest role|below your own/.test(x.message);

/** What a person reads for a refusal: the rank rule in plain words, else the server's reason. */
export function explain(x: unknown): string {
  if (isRankRefusal(x)) {
    const msg = (x as ApiError).message;
    if (/member/.test(msg))
      return 'You can only do this to members whose highest role is below yours. Ask someone ranked higher (or the owner) to do it.';
    return 'You can only change roles that are below your own highest role, and only place roles below it. Ask someone ranked higher (or the owner) to do it.';
  }
  if (x instanceof ApiError && x.status === 403 && /^Missing permission: /.test(x.message)) {
    const names = x.message.replace(/^Missing permission: /, '').split(', ');
    const labels = names.map((n) => PERMISSION_LABELS[n as PermissionName]?.label ?? n);
    return `You need the “${labels.join('” and “')}” permission${labels.length > 1 ? 's' : ''} for this.`;
  }
  if (x instanceof ApiError && x.code === 'CONFLICT' && /owner/.test(x.message))
    return 'The owner cannot be kicked, banned or timed out.';
  return describe(x);
}
