import type {
  EventRecorder,
  PeopleAudience,
  PeopleDispatch,
  PeopleEvent,
  PeopleRecorder,
  RecordedEvent,
} from '../domain/events/recorder.js';
import type { DerivedCache } from '../domain/derived-cache.js';
import { botsOfAudience, recipientBots } from '../domain/events/recipients.js';
import { filterBySubscription, subscribers } from '../domain/events/subscriptions.js';
import type { Clock } from '../ids/clock.js';
import type { SnowflakeGenerator } from '../ids/snowflake.js';
import type { Db } from '../storage/db.js';
import type { CommitHooks } from './commit-hooks.js';
import { batchAtGroupEnd, oncePerGroup } from '../storage/group-commit.js';
import {
  appendEvent,
  appendEvents,
  recipientSet,
  recipientsText,
  type LogKey,
  type LogRow,
} from './log.js';
import { keepAnswer, serializeData, webhookBody } from './serialize.js';

/** An event as the log stores it (events/log.ts). */
interface LogEvent {
  type: string;
  data: string;
  recipients: string;
  audience: PeopleAudience | null;
}

/**
 * The real EventRecorder (D36 outbox). Inside the writer's transaction: decide the recipients
 * (D34) and append the event, once, with its recipients and its people's audience (D72), to the
 * event log (events/log.ts) — one row whatever their number (issue 15). Only after the
 * transaction has committed is the row handed on (`committed`); a rollback takes the row and
 * the notification with it.
 */
export class OutboxRecorder implements EventRecorder, PeopleRecorder {
  constructor(
    private readonly o: {
      ids: SnowflakeGenerator;
      clock: Clock;
      /** D34 recipients are derived data: kept while membership, roles and overwrites stand */
      cache: DerivedCache;
      hooks: CommitHooks;
      committed: (rows: LogRow[]) => void;
      /**
       * D72: a row was appended in a transaction not yet committed (this node's people get it
       * at commit, so its log reader must not hand it to them again, whichever comes first)
       */
      logged?: (row: LogRow) => void;
      /**
       * Rows are being appended whose keys are not known yet — and, in a PostgreSQL group commit
       * written as one statement (storage/group-commit.ts), may be committed before `logged`
       * hears of them: the log reader holds the people's rows it reads until the returned
       * function is called (after `logged`).
       */
      logging?: () => () => void;
      tokenReset: (botId: number) => void;
      /**
       * D51: a committed people's event, for this node's people (after commit). Other nodes
       * read it from the event log (D72), where it is recorded in the same transaction.
       */
      people: (e: PeopleDispatch) => void;
      /** D51: an ephemeral people's event (typing, presence), at once, for every node */
      ephemeral: (e: PeopleDispatch) => void;
      /**
       * D63: the database through which an ephemeral event reaches the bots that subscribed to
       * its type (TYPING_START, PRESENCE_UPDATE); without it, bots never receive them
       */
      db?: Db;
      /** a failure of that asynchronous delivery (logged, never thrown at the caller) */
      onError?: (err: unknown) => void;
      /** D47: a person's sessions changed (after commit), for every node */
      userSessions: (userId: number) => void;
      /** D36/D38: webhook deliveries for the same recipients, in the same transaction */
      webhooks?: {
        enqueue: (
          trx: Db,
          type: string,
          /** built only when some recipient has a webhook address */
          body: string | (() => string),
          botIds: readonly number[],
          version?: number,
        ) => number | Promise<number>;
        /** after commit, when deliveries were enqueued */
        committed: () => void;
      };
    },
  ) {}

  async record(trx: Db, event: RecordedEvent): Promise<void> {
    const type = event.envelope.type;
    const data = serializeData(event.envelope);
    const answered = event.envelope.data;
    if (event.answer && typeof answered === 'object' && answered !== null)
      keepAnswer(answered, data);
    // D51: people receive the bots' event types too, decided per node from memory — never a
    // stored row per person; the same serialized data. This node's people hear it right after
    // commit; the other nodes' read it from the log row below (D72: not through Redis).
    // D71: an event for bots only (MESSAGE_EMBEDS_UPDATE) has no people's audience; D65: nor
    // has an interaction (the bot's alone).
    const audience =
      event.people === false || event.scope.kind === 'bot' ? null : audienceOf(event.scope);
    if (audience !== null) {
      const people: PeopleDispatch = { type, data, audience };
      this.o.hooks.afterCommit(trx, () => this.o.people(people));
    }
    // One version read for the recipients and the webhook targets (derived-cache.ts `now`), and
    // for every member of a group commit (storage/group-commit.ts oncePerGroup) — or none, when
    // the request brings the one it was authenticated at (read after it arrived, like this one).
    const pin = event.pinned ?? oncePerGroup(trx, 'cache-version', () => this.o.cache.now());
    const version = typeof pin === 'number' ? pin : await pin;
    // D34 decides who may receive it; D63: beyond the eight, only the bots that subscribed.
    // Cached (nothing changed since), each is known at once: awaited only when pending (issue 29).
    const all = recipientBots(trx, this.o.cache, event.scope, version);
    const subscribed = filterBySubscription(
      trx,
      this.o.cache,
      type,
      all instanceof Promise ? await all : all,
      version,
    );
    const bots = subscribed instanceof Promise ? await subscribed : subscribed;
    // nobody at all to tell (a bots-only event no bot subscribed to): no row
    if (audience === null && bots.length === 0) return;
    const recipients = recipientsOf(bots);
    const appended = this.append(trx, { type, data, recipients, audience });
    const row = appended instanceof Promise ? await appended : appended;
    this.o.hooks.afterCommit(trx, () => this.o.committed([row]));
    if (bots.length === 0) return;
    const webhooks = this.o.webhooks;
    if (!webhooks) return;
    // D38: webhooks go to every recipient, connected or not (none with an address: known at once).
    const queued = webhooks.enqueue(trx, type, () => webhookBody(type, data), bots, version);
    if ((queued instanceof Promise ? await queued : queued) > 0)
      this.o.hooks.afterCommit(trx, () => webhooks.committed());
  }

  /** One log row (issue 15), with its recipient bots and the people who may see it (D72). */
  private append(trx: Db, e: LogEvent): LogRow | Promise<LogRow> {
    const set = this.sets.get(e.recipients);
    return set === undefined ? this.appendWithNewSet(trx, e) : this.appendIn(trx, e, set);
  }

  private async appendWithNewSet(trx: Db, e: LogEvent): Promise<LogRow> {
    const set = await recipientSet(trx, e.recipients);
    // Known only once committed: a rollback may take a new set's row with it.
    this.o.hooks.afterCommit(trx, () => this.rememberSet(e.recipients, set));
    return this.appendIn(trx, e, set);
  }

  /**
   * The row, with its set known. In a group commit it is written at the group's end and returned
   * at once, without a promise (issue 29); alone, its statement is awaited.
   */
  private appendIn(trx: Db, e: LogEvent, set: number): LogRow | Promise<LogRow> {
    const now = this.o.clock.now();
    const audience = e.audience === null ? null : JSON.stringify(e.audience);
    const row: { -readonly [K in keyof LogRow]: LogRow[K] } = {
      xid: 0,
      pos: 0,
      type: e.type,
      data: e.data,
      recipients: e.recipients,
      createdAt: now,
      audience,
    };
    const logged = this.o.logged;
    const fields = { type: e.type, data: e.data, recipientSet: set, now, audience };
    // Issue 29: a group commit's events go in one statement at the group's end
    // (storage/group-commit.ts); the row's key is known from then on — before the COMMIT, or
    // (PostgreSQL, the group's end written as one statement) with it, while `logging` holds the
    // log reader's people's rows: either way before this node's people could get a row twice.
    const later = batchAtGroupEnd(
      trx,
      'event_log',
      { fields, row },
      async (t, items) => {
        const settled = this.o.logging?.();
        try {
          const keys = await appendEvents(
            t,
            items.map((i) => i.fields),
          );
          items.forEach((i, n) => {
            const key = keys[n] as LogKey;
            i.row.xid = key.xid;
            i.row.pos = key.pos;
            logged?.(i.row);
          });
        } finally {
          settled?.();
        }
        // one INSERT, handed over before anything is awaited (storage/group-commit.ts Gatherable)
      },
      { gather: true },
    );
    if (later) return row;
    return appendEvent(trx, fields).then((key) => {
      row.xid = key.xid;
      row.pos = key.pos;
      logged?.(row);
      return row;
    });
  }

  /** recipient sets known to be committed (sets never change): recipients text → id */
  private readonly sets = new Map<string, number>();

  private rememberSet(recipients: string, id: number): void {
    if (this.sets.size >= 10_000) this.sets.clear();
    this.sets.set(recipients, id);
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
    // D72: logged in the same transaction (no bot receives it), for the other nodes to read —
    // after the transaction's own work, since this call cannot wait for the write.
    this.o.hooks.beforeCommit(trx, async (t) => {
      // D63: a people's type reaches the bots that subscribed to it (and may see it, D34)
      const pin = oncePerGroup(t, 'cache-version', () => this.o.cache.now());
      const version = typeof pin === 'number' ? pin : await pin;
      const subscribed = (await subscribers(t, this.o.cache, version)).has(e.type)
        ? await filterBySubscription(
            t,
            this.o.cache,
            e.type,
            await botsOfAudience(t, this.o.cache, e.audience, version),
            version,
          )
        : [];
      const row = await this.append(t, { ...e, recipients: recipientsOf(subscribed) });
      this.o.hooks.afterCommit(t, () => this.o.committed([row]));
      const webhooks = this.o.webhooks;
      if (
        subscribed.length > 0 &&
        webhooks &&
        (await webhooks.enqueue(t, e.type, webhookBody(e.type, e.data), subscribed, version)) > 0
      )
        this.o.hooks.afterCommit(t, () => webhooks.committed());
    });
  }

  sessionsChanged(trx: Db, userId: number): void {
    this.o.hooks.afterCommit(trx, () => this.o.userSessions(userId));
  }

  ephemeral(event: PeopleEvent): void {
    const e: PeopleDispatch = {
      type: event.type,
      data: JSON.stringify(event.data),
      audience: event.audience,
    };
    this.o.ephemeral(e);
    const db = this.o.db;
    if (db) this.ephemeralToBots(db, e).catch((err) => this.o.onError?.(err));
  }

  /**
   * D63: typing and presence reach a bot only if it subscribed to the type (and would see the
   * event by D34's rules), on the gateway and by webhook alike. People heard it already, so the
   * row has no people's audience; with no subscriber (the common case) nothing is written — the
   * subscriptions are derived data, read without a query.
   */
  private async ephemeralToBots(db: Db, e: PeopleDispatch): Promise<void> {
    const pin = this.o.cache.now();
    const version = typeof pin === 'number' ? pin : await pin;
    if (!(await subscribers(db, this.o.cache, version)).has(e.type)) return;
    const bots = await filterBySubscription(
      db,
      this.o.cache,
      e.type,
      await botsOfAudience(db, this.o.cache, e.audience, version),
      version,
    );
    if (bots.length === 0) return;
    await db.transaction().execute(async (t) => {
      const row = await this.append(t, {
        type: e.type,
        data: e.data,
        recipients: recipientsOf(bots),
        audience: null,
      });
      this.o.hooks.afterCommit(t, () => this.o.committed([row]));
      const webhooks = this.o.webhooks;
      if (
        webhooks &&
        (await webhooks.enqueue(t, e.type, webhookBody(e.type, e.data), bots, version)) > 0
      )
        this.o.hooks.afterCommit(t, () => webhooks.committed());
    });
  }
}

/** The stored recipients text, built once per recipient list the derived cache hands out. */
const recipientsCache = new WeakMap<readonly number[], string>();
function recipientsOf(bots: readonly number[]): string {
  if (bots.length === 0) return recipientsText(bots);
  let text = recipientsCache.get(bots);
  if (text === undefined) recipientsCache.set(bots, (text = recipientsText(bots)));
  return text;
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
    case 'bot':
      return { kind: 'users', userIds: [] };
  }
}
