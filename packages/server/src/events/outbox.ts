import type {
  EventRecorder,
  PeopleAudience,
  PeopleDispatch,
  PeopleEvent,
  PeopleRecorder,
  RecordedEvent,
} from '../domain/events/recorder.js';
import type { DerivedCache } from '../domain/derived-cache.js';
import { recipientBots } from '../domain/events/recipients.js';
import type { Clock } from '../ids/clock.js';
import type { SnowflakeGenerator } from '../ids/snowflake.js';
import type { Db } from '../storage/db.js';
import { rawQuery } from '../storage/raw-sql.js';
import type { CommitHooks } from './commit-hooks.js';
import { serializeData, webhookBody } from './serialize.js';
import {
  allocatePositions,
  botsWithSessions,
  EntryKind,
  insertEntries,
  type StreamEntry,
} from './stream.js';

export interface CommittedEntry {
  botId: number;
  entry: StreamEntry;
}

/**
 * The real EventRecorder (D36 outbox). Inside the writer's transaction: decide the recipients
 * (D34), store the event once, and append one row to each recipient bot's stream. Only after
 * the transaction has committed are the new entries handed on (`committed`); a rollback takes
 * the rows, the stream positions and the notification with it.
 */
export class OutboxRecorder implements EventRecorder, PeopleRecorder {
  constructor(
    private readonly o: {
      ids: SnowflakeGenerator;
      clock: Clock;
      /** D34 recipients are derived data: kept while membership, roles and overwrites stand */
      cache: DerivedCache;
      hooks: CommitHooks;
      /**
       * Write stream entries only for bots with a live or resumable gateway session (D31: no
       * one else is owed a dispatch; a new session starts after its READY). Exact only where
       * writers are serialized — SQLite, one write transaction at a time, so a READY and an
       * event can never interleave; on PostgreSQL every recipient gets its entry.
       */
      streamsOnlyForSessions?: { resumeWindowMs: number };
      committed: (entries: CommittedEntry[]) => void;
      tokenReset: (botId: number) => void;
      /** D51: people's events (after commit, or at once when ephemeral) for every node */
      people: (e: PeopleDispatch) => void;
      /** D47: a person's sessions changed (after commit), for every node */
      userSessions: (userId: number) => void;
      /** D36/D38: webhook deliveries for the same recipients, in the same transaction */
      webhooks?: {
        enqueue: (
          trx: Db,
          type: string,
          body: string,
          botIds: readonly number[],
        ) => Promise<number>;
        /** after commit, when deliveries were enqueued */
        committed: () => void;
      };
    },
  ) {}

  async record(trx: Db, event: RecordedEvent): Promise<void> {
    const type = event.envelope.type;
    const data = serializeData(event.envelope);
    // D51: people receive the bots' event types too, decided per node from memory — never a
    // stored row per person; the same serialized data.
    const people: PeopleDispatch = { type, data, audience: audienceOf(event.scope) };
    this.o.hooks.afterCommit(trx, () => this.o.people(people));
    const bots = await recipientBots(trx, this.o.cache, event.scope);
    if (bots.length === 0) return;
    const now = this.o.clock.now();
    const live = this.o.streamsOnlyForSessions;
    const streamBots = live ? await botsWithSessions(trx, bots, now - live.resumeWindowMs) : bots;
    if (streamBots.length > 0) await this.append(trx, streamBots, type, data, now);
    const hooks = this.o.hooks;
    const webhooks = this.o.webhooks;
    // D38: webhooks go to every recipient, connected or not.
    if (webhooks && (await webhooks.enqueue(trx, type, webhookBody(type, data), bots)) > 0)
      hooks.afterCommit(trx, () => webhooks.committed());
  }

  /** The event, stored once, at the next position of each bot's stream. */
  private async append(
    trx: Db,
    bots: readonly number[],
    type: string,
    data: string,
    now: number,
  ): Promise<void> {
    const id = this.o.ids.next();
    await rawQuery(
      trx,
      'insert into "events" ("id", "type", "data", "created_at") values (?, ?, ?, ?)',
      [id, type, data, now],
    );
    const positions = await allocatePositions(trx, bots);
    const rows = bots.map((bot_id) => {
      const seq = positions.get(bot_id);
      if (seq === undefined) throw new Error(`no stream position for bot ${bot_id}`);
      return { bot_id, seq, kind: EntryKind.EVENT, event_id: id, created_at: now };
    });
    await insertEntries(trx, rows);
    this.o.hooks.afterCommit(trx, () =>
      this.o.committed(
        rows.map((r) => ({
          botId: r.bot_id,
          entry: { seq: r.seq, kind: r.kind, type, data, createdAt: now },
        })),
      ),
    );
  }

  async botTokenReset(trx: Db, botId: number): Promise<void> {
    this.o.hooks.afterCommit(trx, () => this.o.tokenReset(botId));
  }

  people(trx: Db, event: PeopleEvent): void {
    const e: PeopleDispatch = {
      type: event.type,
      data: JSON.stringify(event.data),
      audience: event.audience,
    };
    this.o.hooks.afterCommit(trx, () => this.o.people(e));
  }

  sessionsChanged(trx: Db, userId: number): void {
    this.o.hooks.afterCommit(trx, () => this.o.userSessions(userId));
  }

  ephemeral(event: PeopleEvent): void {
    this.o.people({ type: event.type, data: JSON.stringify(event.data), audience: event.audience });
  }
}

/** D34 scopes as D51 audiences: the same rules, applied to people. */
function audienceOf(scope: RecordedEvent['scope']): PeopleAudience {
  switch (scope.kind) {
    case 'channel':
      return { kind: 'channel', guildId: scope.guildId, channelId: scope.channelId };
    case 'guild':
      return scope.alsoUserId === undefined
        ? { kind: 'guild', guildId: scope.guildId }
        : { kind: 'guild', guildId: scope.guildId, alsoUserIds: [scope.alsoUserId] };
    case 'dm':
      return { kind: 'users', userIds: [...scope.userIds] };
  }
}
