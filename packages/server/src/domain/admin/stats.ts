import type { AdminStats } from '@parley/protocol';
import type { Domain } from '../context.js';

/**
 * D52: counts for the operator. Bot connections are the gateway sessions a connection holds
 * (shared by all nodes); people's connections live in each node's memory, so the caller passes
 * what it knows (this node's count).
 */
export async function stats(d: Domain, peopleConnections: number): Promise<AdminStats> {
  const count = async (q: Promise<{ n: number | string | bigint } | undefined>) =>
    Number((await q)?.n ?? 0);
  const db = d.db;
  const [users, bots, guilds, channels, messages, botConns, backlog] = await Promise.all([
    count(
      db
        .selectFrom('users')
        .select((e) => e.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
    ),
    count(
      db
        .selectFrom('bots')
        .select((e) => e.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
    ),
    count(
      db
        .selectFrom('guilds')
        .select((e) => e.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
    ),
    count(
      db
        .selectFrom('channels')
        .select((e) => e.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
    ),
    count(
      db
        .selectFrom('messages')
        .select((e) => e.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
    ),
    count(
      db
        .selectFrom('gateway_sessions')
        .select((e) => e.fn.countAll<number>().as('n'))
        .where('connected', '=', 1)
        .where('ended', '=', 0)
        .executeTakeFirst(),
    ),
    count(
      db
        .selectFrom('webhook_deliveries')
        .select((e) => e.fn.countAll<number>().as('n'))
        .where('state', '=', 'pending')
        .executeTakeFirst(),
    ),
  ]);
  return {
    users,
    people: users - bots,
    bots,
    guilds,
    channels,
    messages,
    connections: { people: peopleConnections, bots: botConns },
    webhookBacklog: backlog,
  };
}
