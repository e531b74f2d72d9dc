import {
  CallbackBody,
  INTERACTION_WINDOW_MS,
  MessageFlags,
  type Message,
  type MessageInteraction,
  type ResponseMessage,
} from '@parley/protocol';
import { AppError, conflict, invalid, notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import type { InteractionsTable } from '../../storage/schema-interactions.js';
import { makeAjv } from '../../validation/ajv.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { interactionMessages } from '../messages/messages.service.js';
import { checkComponents } from './components.js';
import { hashInteractionToken } from './tokens.js';
import { choicesWaiter } from './waiters.js';

/**
 * D65: how a bot answers an interaction. The interaction's token (in the path) is the only
 * authorization, for 15 minutes; exactly one callback wins — the claim is one conditional
 * UPDATE, so concurrent callbacks (through any nodes) find one winner and the rest 409 — and a
 * callback that fails its own checks releases the claim, so the bot may try again.
 *
 * Ephemeral messages (flags 1) and the "thinking…" of a deferral reach only the invoker's own
 * sessions (a people's event to exactly that person) and are never stored in history: an
 * ephemeral @original lives in its interaction's row, for its edits within the window.
 */
type Row = InteractionsTable;

/** What an ephemeral (or not yet answered) @original is, kept on the interaction. */
interface Kept {
  message: Message;
  ephemeral: boolean;
  /** a deferral's "thinking…" not yet replaced by the answer */
  pending: boolean;
}

const unknownInteraction = (): AppError => notFound('interaction (or its 15 minutes have passed)');

async function byToken(
  d: Domain,
  token: string,
  expect: { id?: number; botId?: number },
): Promise<Row> {
  const row = await d.db
    .selectFrom('interactions')
    .selectAll()
    .where('token_hash', '=', hashInteractionToken(token))
    .executeTakeFirst();
  if (
    !row ||
    (expect.id !== undefined && row.id !== expect.id) ||
    (expect.botId !== undefined && row.bot_id !== expect.botId)
  )
    throw unknownInteraction();
  // D65: no 3-second cliff — but nothing after 15 minutes.
  if (d.clock.now() >= row.created_at + INTERACTION_WINDOW_MS) throw unknownInteraction();
  return row;
}

async function botPrincipal(d: Domain, botId: number): Promise<Principal> {
  const b = await d.db
    .selectFrom('bots as b')
    .innerJoin('users as u', 'u.id', 'b.user_id')
    .select(['b.id', 'u.id as userId', 'u.name'])
    .where('b.id', '=', botId)
    .executeTakeFirst();
  if (!b) throw unknownInteraction();
  return { userId: b.userId, name: b.name, isBot: true, botId: b.id };
}

const meta = (it: Row): MessageInteraction => ({ id: it.id, name: it.name, userId: it.user_id });

function hasBody(m: ResponseMessage, at: string): void {
  if ((m.content ?? '') === '' && (m.components ?? []).length === 0)
    throw invalid(`${at}.content`, 'a message needs content or components');
  if (m.components) checkComponents(m.components, `${at}.components`);
}

/** Which callbacks answer which interactions (D65). */
const ALLOWED: Record<number, readonly number[]> = {
  2: [4, 5],
  3: [4, 5, 6, 7],
  4: [8],
};

export async function callback(
  d: Domain,
  id: number,
  token: string,
  body: CallbackBody,
): Promise<void> {
  const it = await byToken(d, token, { id });
  if (!(ALLOWED[it.type] ?? []).includes(body.type))
    throw invalid(
      'type',
      `callback type ${body.type} does not answer an interaction of type ${it.type}`,
    );
  if (body.type === 4 || body.type === 7) hasBody(body.data, 'data');
  const bot = await botPrincipal(d, it.bot_id);
  // The one winner (D65: a second → 409).
  const now = d.clock.now();
  const claimed = await d.db
    .updateTable('interactions')
    .set({ responded_at: now, response_type: body.type })
    .where('id', '=', it.id)
    .where('responded_at', 'is', null)
    .executeTakeFirst();
  if (claimed.numUpdatedRows === 0n) throw conflict('This interaction has already been answered');
  try {
    await act(d, it, bot, body);
  } catch (err) {
    await d.db
      .updateTable('interactions')
      .set({ responded_at: null, response_type: null })
      .where('id', '=', it.id)
      .execute();
    throw err;
  }
}

async function act(d: Domain, it: Row, bot: Principal, body: CallbackBody): Promise<void> {
  switch (body.type) {
    case 4: {
      const m = await newMessage(d, it, bot, body.data, false);
      await d.db
        .updateTable('interactions')
        .set({ original_id: m.id })
        .where('id', '=', it.id)
        .execute();
      return;
    }
    case 5: {
      // "thinking…": the invoker's alone, @original until the answer takes its place.
      const thinking = ephemeralView(d, it, bot, d.ids.next(), {
        content: '',
        flags: MessageFlags.EPHEMERAL | MessageFlags.LOADING,
      });
      const kept: Kept = { message: thinking, ephemeral: body.data?.flags === 1, pending: true };
      await d.db.transaction().execute(async (trx) => {
        await trx
          .updateTable('interactions')
          .set({ original_id: thinking.id, original_json: JSON.stringify(kept) })
          .where('id', '=', it.id)
          .execute();
        tellInvoker(d, trx, it, 'CREATE', thinking);
      });
      return;
    }
    case 6:
      return; // the component's message stays; @original edits it later
    case 7:
      await componentMessage(d, it, bot, body.data);
      return;
    case 8:
      await d.db
        .updateTable('interactions')
        .set({ choices: JSON.stringify(body.data.choices) })
        .where('id', '=', it.id)
        .execute();
      choicesWaiter.answered(it.id);
      return;
  }
}

/** A reply or follow-up: ephemeral (the invoker's alone, never stored) or a stored message. */
async function newMessage(
  d: Domain,
  it: Row,
  bot: Principal,
  data: ResponseMessage,
  followUp: boolean,
): Promise<Message> {
  if (data.flags === MessageFlags.EPHEMERAL) {
    const m = ephemeralView(d, it, bot, d.ids.next(), { ...data, flags: MessageFlags.EPHEMERAL });
    await d.db.transaction().execute(async (trx) => {
      // The first ephemeral answer is @original: kept for its edits (a follow-up is not).
      if (!followUp)
        await trx
          .updateTable('interactions')
          .set({
            original_json: JSON.stringify({
              message: m,
              ephemeral: true,
              pending: false,
            } satisfies Kept),
          })
          .where('id', '=', it.id)
          .execute();
      tellInvoker(d, trx, it, 'CREATE', m);
    });
    return m;
  }
  return interactionMessages.send(
    d,
    bot,
    it.channel_id,
    { content: data.content ?? '', ...(data.components ? { components: data.components } : {}) },
    { interaction: meta(it) },
  );
}

function ephemeralView(
  d: Domain,
  it: Row,
  bot: Principal,
  id: number,
  data: ResponseMessage & { flags: number },
): Message {
  const m: Message = {
    id,
    channelId: it.channel_id,
    content: data.content ?? '',
    author: { id: bot.userId, name: bot.name, isBot: true },
    timestamp: iso(d.clock.now()),
    flags: data.flags,
    interaction: meta(it),
  };
  if (it.guild_id !== null) m.guildId = it.guild_id;
  if (data.components && data.components.length > 0) m.components = data.components;
  return m;
}

/** D65: MESSAGE_CREATE / MESSAGE_UPDATE (DM_… in a DM) to the invoker's own sessions only. */
function tellInvoker(
  d: Domain,
  trx: Parameters<Domain['people']['people']>[0],
  it: Row,
  what: 'CREATE' | 'UPDATE',
  m: Message,
): void {
  const type =
    it.guild_id === null ? (`DM_MESSAGE_${what}` as const) : (`MESSAGE_${what}` as const);
  d.people.people(trx, { type, data: m, audience: { kind: 'users', userIds: [it.user_id] } });
}

/** Type 7 and the @original of a component interaction: the component's own message. */
async function componentMessage(
  d: Domain,
  it: Row,
  bot: Principal,
  data: Omit<ResponseMessage, 'flags'>,
): Promise<Message> {
  if (it.message_id === null)
    throw invalid('type', 'only a component interaction updates its message');
  return interactionMessages.edit(d, bot, it.channel_id, it.message_id, {
    ...(data.content === undefined ? {} : { content: data.content }),
    ...(data.components === undefined ? {} : { components: data.components }),
  });
}

/** `PATCH /webhooks/:botId/:token/messages/@original`. */
export async function editOriginal(
  d: Domain,
  botId: number,
  token: string,
  data: ResponseMessage,
): Promise<Message> {
  const it = await byToken(d, token, { botId });
  if (it.responded_at === null) throw notFound('original message (answer the interaction first)');
  if (data.components) checkComponents(data.components);
  const bot = await botPrincipal(d, it.bot_id);
  if (it.response_type === 6 || it.response_type === 7) return componentMessage(d, it, bot, data);
  if (it.original_id === null) throw notFound('original message');
  if (it.original_json === null)
    return interactionMessages.edit(d, bot, it.channel_id, it.original_id, {
      ...(data.content === undefined ? {} : { content: data.content }),
      ...(data.components === undefined ? {} : { components: data.components }),
    });
  const kept = JSON.parse(it.original_json) as Kept;
  if (kept.pending && !kept.ephemeral) {
    // The deferred answer, public: stored with the id of its "thinking…", which it replaces in
    // place for the invoker (MESSAGE_UPDATE, same id); everyone else sees it arrive.
    hasBody(data, 'data');
    const claimed = await d.db
      .updateTable('interactions')
      .set({ original_json: null })
      .where('id', '=', it.id)
      .where('original_json', '=', it.original_json)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n)
      throw conflict('The original message changed meanwhile; retry');
    try {
      const m = await interactionMessages.send(
        d,
        bot,
        it.channel_id,
        {
          content: data.content ?? '',
          ...(data.components ? { components: data.components } : {}),
        },
        { interaction: meta(it), id: it.original_id },
      );
      await d.db.transaction().execute(async (trx) => tellInvoker(d, trx, it, 'UPDATE', m));
      return m;
    } catch (err) {
      await d.db
        .updateTable('interactions')
        .set({ original_json: it.original_json })
        .where('id', '=', it.id)
        .execute();
      throw err;
    }
  }
  // Ephemeral: edited for the invoker alone (a pending one becomes the answer).
  const { flags: _f, ...was } = kept.message;
  const next: Message = {
    ...was,
    flags: MessageFlags.EPHEMERAL,
    content: data.content ?? (kept.pending ? '' : kept.message.content),
  };
  if (data.components !== undefined) {
    if (data.components.length > 0) next.components = data.components;
    else delete next.components;
  }
  if (kept.pending)
    hasBody(
      {
        ...(next.content ? { content: next.content } : {}),
        ...(next.components ? { components: next.components } : {}),
      },
      'data',
    );
  else next.editedTimestamp = iso(d.clock.now());
  await d.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('interactions')
      .set({
        original_json: JSON.stringify({
          message: next,
          ephemeral: true,
          pending: false,
        } satisfies Kept),
      })
      .where('id', '=', it.id)
      .execute();
    tellInvoker(d, trx, it, 'UPDATE', next);
  });
  return next;
}

/**
 * `POST /webhooks/:botId/:token`: a follow-up message. After a deferral whose "thinking…" is still
 * showing, the first follow-up is the answer (it takes the place of "thinking…", as @original).
 */
export async function followUp(
  d: Domain,
  botId: number,
  token: string,
  data: ResponseMessage,
): Promise<Message> {
  const it = await byToken(d, token, { botId });
  if (it.responded_at === null)
    throw conflict('Answer the interaction (callback) before following up');
  if (it.original_json !== null && (JSON.parse(it.original_json) as Kept).pending)
    return editOriginal(d, botId, token, data);
  hasBody(data, 'data');
  return newMessage(d, it, await botPrincipal(d, it.bot_id), data, true);
}

const checkCallback = makeAjv({ coerceTypes: false }).compile(CallbackBody);

/**
 * D65: a webhook bot may answer in its 2xx response: a JSON `{type, data}` body is taken as the
 * callback of the interaction it was sent. Anything else (empty, not JSON, not a callback) is
 * no answer, and the bot may still call back within the window. Errors are the bot's: the
 * delivery itself succeeded.
 */
export async function callbackFromWebhook(
  d: Domain,
  delivered: string,
  response: string,
): Promise<void> {
  if (response.trim() === '') return;
  let body: unknown;
  let sent: { data?: { id?: unknown; token?: unknown } };
  try {
    body = JSON.parse(response);
    sent = JSON.parse(delivered) as typeof sent;
  } catch {
    return;
  }
  const id = sent.data?.id;
  const token = sent.data?.token;
  if (typeof id !== 'number' || typeof token !== 'string' || !checkCallback(body)) return;
  try {
    await callback(d, id, token, body as CallbackBody);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
  }
}
