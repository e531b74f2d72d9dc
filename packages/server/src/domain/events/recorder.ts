import type { EventEnvelope } from '@parley/protocol';
import type { Db } from '../../storage/db.js';

/**
 * D36: an event is recorded inside the transaction of the change that causes it. Every write
 * that emits an event calls `record(trx, …)` before its transaction commits; the recorder
 * decides who receives it (D34) and stores it in the outbox. Nothing leaves the process before
 * the transaction has committed (events/outbox.ts), and nothing at all when it rolls back.
 */
export interface EventRecorder {
  record(trx: Db, event: RecordedEvent): Promise<void>;
  /**
   * D8: the bot's token was reset in this transaction. After commit every node closes the bot's
   * gateway connection with 4004 (nodes also check token generations on their own, so a reset
   * from another process without Redis is noticed too).
   */
  botTokenReset(trx: Db, botId: number): Promise<void>;
}

export interface RecordedEvent {
  envelope: EventEnvelope;
  /** where it happened: decides the recipients (D34) */
  scope:
    | { kind: 'channel'; guildId: number; channelId: number }
    | { kind: 'guild'; guildId: number; alsoUserId?: number }
    | { kind: 'dm'; userIds: [number, number] };
}

/** A recorder that drops everything (tools that never deliver events). */
export const noEvents: EventRecorder = { record: async () => {}, botTokenReset: async () => {} };
