import type { Principal } from '../auth/principal.js';

/**
 * D59: who performs a guild action. Each action is one domain function taking the actor and
 * checking access itself; the routes under /api/v1 and /app/v1 pass a person or a bot, the
 * operator's routes (/admin/v1) and the CLI pass the operator, who passes every check
 * explicitly (never by skipping the function). `reason` is the request's X-Audit-Log-Reason
 * (D60), written with the audit entry.
 */
export type Actor =
  | {
      readonly kind: 'person' | 'bot';
      readonly principal: Principal;
      readonly reason: string | null;
    }
  | { readonly kind: 'operator'; readonly reason: string | null };

/** A person or a bot acting through /api/v1 or /app/v1. */
export type CallerActor = Extract<Actor, { kind: 'person' | 'bot' }>;
/** The operator (/admin/v1, the CLI). */
export type OperatorActor = Extract<Actor, { kind: 'operator' }>;

export const actorOf = (p: Principal, reason: string | null = null): CallerActor => ({
  kind: p.isBot ? 'bot' : 'person',
  principal: p,
  reason,
});

export const operator = (reason: string | null = null): OperatorActor => ({
  kind: 'operator',
  reason,
});

/** The user id acting (null for the operator). */
export const actorUserId = (a: Actor): number | null =>
  a.kind === 'operator' ? null : a.principal.userId;
