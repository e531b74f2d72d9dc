/** D11: permission bits of a role, and of a channel overwrite's allow/deny. */
export const Permission = {
  VIEW_CHANNEL: 1,
  SEND_MESSAGES: 2,
  READ_MESSAGE_HISTORY: 4,
  ADMINISTRATOR: 8,
} as const;
export type PermissionName = keyof typeof Permission;

export const ALL_PERMISSIONS = 1 | 2 | 4 | 8;
/** D11: the default @everyone bits. */
export const DEFAULT_EVERYONE_PERMISSIONS = 1 | 2 | 4;
