import { ALL_PERMISSIONS, Permission, type PermissionName } from '@parley/protocol';

/** Pure permission math (D11); the service loads the rows, this decides. */
export interface MemberAccess {
  isOwner: boolean;
  /** @everyone bits */
  everyone: number;
  /** ids and bits of the member's other roles */
  roles: ReadonlyArray<{ id: number; permissions: number }>;
  /** D58: Unix ms until which the member is timed out (null/absent: not) */
  timeoutUntil?: number | null;
}

export interface OverwriteRow {
  roleId: number;
  allow: number;
  deny: number;
}

export function guildPermissions(access: MemberAccess): number {
  if (access.isOwner) return ALL_PERMISSIONS;
  let bits = access.everyone;
  for (const r of access.roles) bits |= r.permissions;
  return bits & Permission.ADMINISTRATOR ? ALL_PERMISSIONS : bits;
}

/**
 * D11 channel overwrites, in the order peers use: @everyone's overwrite first, then the
 * member's roles together (all their denies, then all their allows). Owners and
 * administrators are not subject to overwrites.
 */
export function channelPermissions(
  access: MemberAccess,
  guildId: number,
  overwrites: readonly OverwriteRow[],
): number {
  const base = guildPermissions(access);
  if (base & Permission.ADMINISTRATOR) return ALL_PERMISSIONS;
  let bits = base;
  const everyone = overwrites.find((o) => o.roleId === guildId);
  if (everyone) bits = (bits & ~everyone.deny) | everyone.allow;
  let allow = 0;
  let deny = 0;
  const roleIds = new Set(access.roles.map((r) => r.id));
  for (const o of overwrites) {
    if (o.roleId !== guildId && roleIds.has(o.roleId)) {
      allow |= o.allow;
      deny |= o.deny;
    }
  }
  return ((bits & ~deny) | allow) & ALL_PERMISSIONS;
}

export const has = (bits: number, p: number): boolean => (bits & p) === p;

const NAMES = Object.entries(Permission) as Array<[PermissionName, number]>;

/** The names of the bits set in `bits` (for "Missing permission: …" answers). */
export const bitNames = (bits: number): string[] =>
  NAMES.filter(([, b]) => (bits & b) === b).map(([n]) => n);
