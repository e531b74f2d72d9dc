/**
 * Names of people who left a guild while the app was open (GUILD_MEMBER_REMOVE carries the
 * name): the audit log still names whom a moderator kicked or banned, though they are no longer
 * members the app can look up (D48: a user is visible only while a guild or a DM is shared).
 */
export const formerNames = new Map<number, string>();
