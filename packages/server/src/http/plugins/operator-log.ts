import type { FastifyReply, FastifyRequest } from 'fastify';
import { writeOperatorChange } from '../../domain/audit/audit.service.js';
import type { Domain } from '../../domain/context.js';
import { auditReason } from './actor.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** D60: the route's domain function writes its own audit entry (operator actor) */
    audited?: true;
  }
}

/**
 * D60: every /admin/v1 change is in the operator's own log. The guild actions write their entry
 * in their transaction (config `audited`); every other successful change is written here, before
 * the answer leaves (an answer the operator saw always has its entry).
 */
export const operatorLog =
  (d: Domain) =>
  async (req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return payload;
    if (reply.statusCode >= 400 || req.routeOptions.config.audited) return payload;
    const params = (req.params ?? {}) as Record<string, string | undefined>;
    const ids = Object.entries(params).filter(([, v]) => v !== undefined && /^\d+$/.test(v));
    let reason: string | null = null;
    try {
      reason = auditReason(req);
    } catch {
      // a malformed reason on a route that does not read it: the change is logged without it
    }
    await writeOperatorChange(d.db, d, {
      what: `${req.method} /admin/v1${(req.routeOptions.url ?? '').replace(/^\/admin\/v1/, '')}`,
      reason,
      guildId: params['guildId'] === undefined ? null : Number(params['guildId']),
      targetId: ids.length === 0 ? null : Number(ids.at(-1)?.[1]),
      body: req.body,
    });
    return payload;
  };
