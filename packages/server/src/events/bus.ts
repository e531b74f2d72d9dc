import type { PeopleAudience, PeopleDispatch } from '../domain/events/recorder.js';

/**
 * What nodes tell each other. Everything here is a hint that makes things fast: each node also
 * checks the database on its own every few hundred ms (dispatcher poll, gateway watch), so a
 * lost message costs latency, never an event.
 */
export type Signal =
  /** the event log grew (events/feed.ts): read it */
  | { k: 'log' }
  /** D29: a connection took the bot's session with this claim number; lower ones close 4010 */
  | { k: 'claim'; botId: number; seq: number }
  /** D8: the bot's token was reset; its connections close 4004 */
  | { k: 'token'; botId: number }
  /**
   * D47/D52: a person's sessions changed (logout, ended, password changed, disabled): connections
   * of sessions that no longer exist close with 4004
   */
  | { k: 'user'; userId: number }
  /** D51: an event for people (committed, or ephemeral): every node fans it out to its own */
  | { k: 'people'; e: PeopleDispatch };

/** Delivery of signals to the OTHER processes (the own process is told directly). */
export interface SignalBus {
  publish(signal: Signal): void;
  /** start receiving other processes' signals */
  subscribe(handler: (signal: Signal) => void): Promise<void>;
  close(): Promise<void>;
}

/** One node (SQLite, or no Redis configured): nobody else to tell. */
export const noBus: SignalBus = {
  publish: () => {},
  subscribe: async () => {},
  close: async () => {},
};

export function isAudience(v: unknown): v is PeopleAudience {
  if (typeof v !== 'object' || v === null) return false;
  const a = v as Record<string, unknown>;
  const id = (x: unknown): boolean => typeof x === 'number' && Number.isSafeInteger(x) && x > 0;
  const ids = (x: unknown): boolean => Array.isArray(x) && x.every(id);
  switch (a['kind']) {
    case 'guild':
      return id(a['guildId']) && (a['alsoUserIds'] === undefined || ids(a['alsoUserIds']));
    case 'channel':
      return id(a['guildId']) && id(a['channelId']);
    case 'users':
      return ids(a['userIds']);
    default:
      return false;
  }
}

export function isSignal(v: unknown): v is Signal {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  const id = (x: unknown): boolean => typeof x === 'number' && Number.isSafeInteger(x) && x > 0;
  switch (s['k']) {
    case 'log':
      return true;
    case 'claim':
      return id(s['botId']) && id(s['seq']);
    case 'token':
      return id(s['botId']);
    case 'user':
      return id(s['userId']);
    case 'people': {
      const e = s['e'] as Record<string, unknown> | null | undefined;
      return (
        typeof e === 'object' &&
        e !== null &&
        typeof e['type'] === 'string' &&
        typeof e['data'] === 'string' &&
        isAudience(e['audience'])
      );
    }
    default:
      return false;
  }
}
