/**
 * D11 + D57: permission bits of a role, and of a channel overwrite's allow/deny.
 * D11's four bits keep their values; D57 adds thirteen more.
 */
export const Permission = {
  VIEW_CHANNEL: 1,
  SEND_MESSAGES: 2,
  READ_MESSAGE_HISTORY: 4,
  ADMINISTRATOR: 8,
  // D57: delete others' messages, pin and unpin, remove others' reactions
  MANAGE_MESSAGES: 16,
  // D57: create, edit and delete channels; edit their permission overwrites
  MANAGE_CHANNELS: 32,
  MANAGE_ROLES: 64,
  KICK_MEMBERS: 128,
  BAN_MEMBERS: 256,
  // D57: rename the guild, manage others' invites
  MANAGE_GUILD: 512,
  CREATE_INVITE: 1024,
  ADD_REACTIONS: 2048,
  // D57: messages with attachments, or msgType 1–3
  ATTACH_FILES: 4096,
  // D57: @everyone, @here, and roles that are not mentionable notify
  MENTION_EVERYONE: 8192,
  VIEW_AUDIT_LOG: 16384,
  USE_APPLICATION_COMMANDS: 32768,
  // D57: time members out
  MODERATE_MEMBERS: 65536,
} as const;
export type PermissionName = keyof typeof Permission;

/** Every known bit (D57: a bit outside this mask is 400). */
export const ALL_PERMISSIONS = Object.values(Permission).reduce((all, bit) => all | bit, 0);

/**
 * D57: the @everyone bits of a guild created from now on. (D11's default was
 * VIEW_CHANNEL | SEND_MESSAGES | READ_MESSAGE_HISTORY.)
 */
export const DEFAULT_EVERYONE_PERMISSIONS =
  Permission.VIEW_CHANNEL |
  Permission.SEND_MESSAGES |
  Permission.READ_MESSAGE_HISTORY |
  Permission.CREATE_INVITE |
  Permission.ADD_REACTIONS |
  Permission.ATTACH_FILES |
  Permission.USE_APPLICATION_COMMANDS;

/**
 * D57: the bits an upgrade grants (or denies) wherever a role or overwrite granted (or denied)
 * SEND_MESSAGES before, so that every existing guild behaves as it did.
 */
export const SEND_IMPLIES =
  Permission.ATTACH_FILES | Permission.ADD_REACTIONS | Permission.USE_APPLICATION_COMMANDS;
