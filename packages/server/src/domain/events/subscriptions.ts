import { EVENT_TYPES } from '@parley/protocol';
import type { Db } from '../../storage/db.js';
import type { DerivedCache } from '../derived-cache.js';
import { parseBotEvents } from '../views.js';

const EIGHT: ReadonlySet<string> = new Set(EVENT_TYPES);

/**
 * D56/D63: a type every recipient bot receives (D34's eight), whatever it subscribed to — and
 * D65's INTERACTION_CREATE, which goes only to the one bot it is for, regardless of its
 * subscription.
 */
export const isBaseType = (type: string): boolean =>
  EIGHT.has(type) || type === 'INTERACTION_CREATE';

/**
 * D63: which bots subscribed to which types beyond D34's eight. Few bots subscribe; the whole
 * map is derived data (kept until the bots table changes: storage/derived-writes.ts), so the
 * common case — nobody subscribed to this type — costs no query.
 */
export async function subscribers(
  trx: Db,
  cache: DerivedCache,
  version?: number,
): Promise<ReadonlyMap<string, ReadonlySet<number>>> {
  return cache.get(
    'bot-subscriptions',
    async () => {
      const rows = await trx
        .selectFrom('bots')
        .select(['id', 'events'])
        .where('events', 'is not', null)
        .execute();
      const byType = new Map<string, Set<number>>();
      for (const r of rows)
        for (const t of parseBotEvents(r.events)) {
          const set = byType.get(t) ?? new Set<number>();
          set.add(Number(r.id));
          byType.set(t, set);
        }
      return byType;
    },
    version,
  );
}

/** The recipients of an event of `type` among `bots`: all for the eight, else subscribers. */
export function filterBySubscription(
  trx: Db,
  cache: DerivedCache,
  type: string,
  bots: readonly number[],
  version?: number,
): readonly number[] | Promise<readonly number[]> {
  // the eight base types (every send's): no lookup, no promise (issue 29)
  if (isBaseType(type) || bots.length === 0) return bots;
  return subscribedAmong(trx, cache, type, bots, version);
}

async function subscribedAmong(
  trx: Db,
  cache: DerivedCache,
  type: string,
  bots: readonly number[],
  version?: number,
): Promise<readonly number[]> {
  const subs = (await subscribers(trx, cache, version)).get(type);
  return subs === undefined ? [] : bots.filter((b) => subs.has(b));
}
