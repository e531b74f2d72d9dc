/**
 * What nodes tell each other. Everything here is a hint that makes things fast: each node also
 * checks the database on its own every few hundred ms (dispatcher poll, gateway watch), so a
 * lost message costs latency, never an event.
 */
export type Signal =
  /** new committed stream entries: [botId, last position] */
  | { k: 'heads'; heads: Array<[number, number]> }
  /** D29: a connection took the bot's session at this stream position; older ones close 4010 */
  | { k: 'claim'; botId: number; seq: number }
  /** D8: the bot's token was reset; its connections close 4004 */
  | { k: 'token'; botId: number };

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

export function isSignal(v: unknown): v is Signal {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  const id = (x: unknown): boolean => typeof x === 'number' && Number.isSafeInteger(x) && x > 0;
  switch (s['k']) {
    case 'heads':
      return (
        Array.isArray(s['heads']) &&
        s['heads'].every((h) => Array.isArray(h) && h.length === 2 && id(h[0]) && id(h[1]))
      );
    case 'claim':
      return id(s['botId']) && id(s['seq']);
    case 'token':
      return id(s['botId']);
    default:
      return false;
  }
}
