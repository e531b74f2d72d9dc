import type {
  AnyEventEnvelope,
  EventType,
  Interaction,
  PeopleEventType,
  RichEventType,
} from '@parley/protocol';
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

/** D51: the people's side of the events area (Domain.people). */
export interface PeopleRecorder {
  /**
   * D51: an event only people receive (GUILD_CREATE, CHANNEL_UPDATE, …). Serialized once, handed
   * to this node's people's gateway after `trx` commits (nothing at all on rollback), and, D72,
   * recorded once in the event log in `trx` for the other nodes — never a row per person. Bots'
   * events recorded with `record` reach people too.
   */
  people(trx: Db, event: PeopleEvent): void;
  /** D51: TYPING_START and PRESENCE_UPDATE: nothing to commit, sent at once. */
  ephemeral(event: PeopleEvent): void;
  /**
   * D47/D52: some of this person's sessions ended in `trx` (logout, a session ended, password
   * changed, disabled, deleted). After commit every node closes the gateway connections of
   * sessions that no longer exist with 4004. Outside a transaction pass the plain `db`.
   */
  sessionsChanged(trx: Db, userId: number): void;
}

/**
 * D51: who among the connected people may receive a people's event. Each node decides for its
 * own connections from what it knows of them (membership, channel VIEW: the D34 rules).
 *  - guild: every member of the guild, plus `alsoUserIds` (a person just removed still hears
 *    their GUILD_MEMBER_REMOVE);
 *  - channel: the guild's members who can VIEW the channel;
 *  - users: exactly these people (DMs, a kicked person's GUILD_DELETE, presence of a user is
 *    sent with `guild` audiences of each guild they are in).
 */
export type PeopleAudience =
  | { kind: 'guild'; guildId: number; alsoUserIds?: number[] }
  | { kind: 'channel'; guildId: number; channelId: number }
  | { kind: 'users'; userIds: number[] };

export interface PeopleEvent {
  type: PeopleEventType | EventType | RichEventType;
  /** the dispatch's `d`, built with domain/views.ts (serialized once, by the recorder) */
  data: unknown;
  audience: PeopleAudience;
}

/** A people's event as it travels: data already JSON text (one serialization per event). */
export interface PeopleDispatch {
  type: string;
  data: string;
  audience: PeopleAudience;
}

/** D65: an interaction, for the one bot it is for (never a person). */
export interface InteractionEnvelope {
  type: 'INTERACTION_CREATE';
  data: Interaction;
}

export interface RecordedEvent {
  /**
   * D34's eight reach every recipient bot; D63/D71's only the bots that subscribed to them;
   * D65's INTERACTION_CREATE only the one bot it is for.
   */
  envelope: AnyEventEnvelope | InteractionEnvelope;
  /**
   * false: bots only (D71: MESSAGE_EMBEDS_UPDATE — people hear MESSAGE_UPDATE instead).
   * Default: people receive it too (D51).
   */
  people?: boolean;
  /** where it happened: decides the recipients (D34) */
  scope:
    | { kind: 'channel'; guildId: number; channelId: number }
    | { kind: 'guild'; guildId: number; alsoUserId?: number }
    | { kind: 'dm'; userIds: [number, number] }
    /** D63/D65: exactly this bot, whatever its subscription; no person */
    | { kind: 'bot'; botId: number };
  /**
   * The cache version the request was authenticated at (Principal.pinned, PostgreSQL): read after
   * the request arrived, so its recipients may be read at it instead of at a version read for
   * the group commit.
   */
  pinned?: number | undefined;
  /**
   * The request answers with the event's data (a send answers with its message): its JSON text
   * is kept for the answer (events/serialize.ts answerJson), serialized once for both.
   */
  answer?: true;
}

/** A recorder that drops everything (tools that never deliver events). */
export const noEvents: EventRecorder & PeopleRecorder = {
  record: async () => {},
  botTokenReset: async () => {},
  people: () => {},
  ephemeral: () => {},
  sessionsChanged: () => {},
};
