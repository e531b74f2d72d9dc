import type { AuditEntry, AuditLog } from '@parley/protocol';
import { iso } from '../../ids/clock.js';
import type { Db } from '../../storage/db.js';
import type { Domain } from '../context.js';
import type { Actor } from '../guilds/actor.js';
import { requireRight } from '../guilds/rights.js';
import { Permission } from '@parley/protocol';

/**
 * D60: the audit log. Every guild action writes its entry in the action's own transaction (so
 * an entry exists exactly when the change does); the operator's changes are also the operator's
 * own log (`operator_log` = 1: every /admin/v1 and CLI change, `actorId` null). Entries are kept
 * PARLEY_AUDIT_RETENTION_DAYS (domain/retention.ts).
 */
export type AuditAction =
  | 'GUILD_UPDATE'
  | 'CHANNEL_CREATE'
  | 'CHANNEL_UPDATE'
  | 'CHANNEL_DELETE'
  | 'OVERWRITE_UPDATE'
  | 'ROLE_CREATE'
  | 'ROLE_UPDATE'
  | 'ROLE_DELETE'
  | 'MEMBER_ROLE_UPDATE'
  | 'MEMBER_KICK'
  | 'MEMBER_BAN_ADD'
  | 'MEMBER_BAN_REMOVE'
  | 'MEMBER_TIMEOUT'
  | 'MESSAGE_DELETE'
  | 'MESSAGE_PIN'
  | 'MESSAGE_UNPIN'
  | 'INVITE_CREATE'
  | 'INVITE_DELETE'
  | 'BOT_ADD'
  | 'COMMANDS_UPDATE'
  // The operator's own log only (changes outside any guild's log, D60).
  | 'GUILD_CREATE'
  | 'GUILD_DELETE'
  | 'OPERATOR_CHANGE';

export interface Change {
  key: string;
  old?: unknown;
  new?: unknown;
}

/** The changed keys between two records (only those that differ). */
export function diff(before: Record<string, unknown>, after: Record<string, unknown>): Change[] {
  const out: Change[] = [];
  for (const [key, value] of Object.entries(after))
    if (value !== undefined && JSON.stringify(before[key]) !== JSON.stringify(value))
      out.push({ key, old: before[key] ?? null, new: value });
  return out;
}

/** Write one entry inside the action's transaction. */
export async function writeAudit(
  trx: Db,
  d: Pick<Domain, 'ids' | 'clock'>,
  actor: Actor,
  e: { guildId: number | null; action: AuditAction; targetId: number | null; changes?: Change[] },
): Promise<void> {
  await trx
    .insertInto('audit_log')
    .values({
      id: d.ids.next(),
      guild_id: e.guildId,
      actor_id: actor.kind === 'operator' ? null : actor.principal.userId,
      actor_type: actor.kind === 'operator' ? 'operator' : actor.kind === 'bot' ? 'bot' : 'user',
      action: e.action,
      target_id: e.targetId,
      reason: actor.reason,
      changes: JSON.stringify(e.changes ?? []),
      operator_log: actor.kind === 'operator' ? 1 : 0,
      created_at: d.clock.now(),
    })
    .execute();
}

export interface AuditQuery {
  before?: number | undefined;
  limit: number;
  action?: string | undefined;
  actorId?: number | undefined;
}

interface Row {
  id: number;
  actor_id: number | null;
  actor_type: string;
  action: string;
  target_id: number | null;
  reason: string | null;
  changes: string;
  created_at: number;
}

const view = (r: Row): AuditEntry => ({
  id: Number(r.id),
  actorId: r.actor_id === null ? null : Number(r.actor_id),
  actorType: r.actor_type as AuditEntry['actorType'],
  action: r.action,
  targetId: r.target_id === null ? null : Number(r.target_id),
  reason: r.reason,
  changes: JSON.parse(r.changes) as AuditEntry['changes'],
  createdAt: iso(Number(r.created_at)),
});

async function page(
  d: Domain,
  where: { guildId: number } | { operator: true },
  q: AuditQuery,
): Promise<AuditLog> {
  let query = d.db
    .selectFrom('audit_log')
    .select([
      'id',
      'actor_id',
      'actor_type',
      'action',
      'target_id',
      'reason',
      'changes',
      'created_at',
    ]);
  query =
    'guildId' in where
      ? query.where('guild_id', '=', where.guildId)
      : query.where('operator_log', '=', 1);
  if (q.before !== undefined) query = query.where('id', '<', q.before);
  if (q.action !== undefined) query = query.where('action', '=', q.action);
  if (q.actorId !== undefined) query = query.where('actor_id', '=', q.actorId);
  // D16-style paging, newest first (D60).
  const rows = (await query
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute()) as Row[];
  return { entries: rows.slice(0, q.limit).map(view), hasMore: rows.length > q.limit };
}

/** D60 `GET /guilds/:guildId/audit-log` (VIEW_AUDIT_LOG; the operator reads any guild's). */
export async function guildAuditLog(
  d: Domain,
  actor: Actor,
  guildId: number,
  q: AuditQuery,
): Promise<AuditLog> {
  await requireRight(d, actor, guildId, Permission.VIEW_AUDIT_LOG);
  return page(d, { guildId }, q);
}

/** D60 `GET /admin/v1/audit-log`: the operator's own log. */
export async function operatorAuditLog(d: Domain, q: AuditQuery): Promise<AuditLog> {
  return page(d, { operator: true }, q);
}
