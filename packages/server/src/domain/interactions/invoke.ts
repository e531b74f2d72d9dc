import {
  AUTOCOMPLETE_WAIT_MS,
  Permission,
  type CommandChoice,
  type CommandDeclaration,
  type Interaction,
  type InvokeBody,
} from '@parley/protocol';
import { forbidden, invalid, notFound } from '../../errors/app-error.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { selectMessages } from '../messages/read.js';
import { has } from '../permissions/permissions.js';
import { messageView } from '../views.js';
import { readExtra } from '../messages/extra.js';
import { runnable } from './commands.service.js';
import { findComponent } from './components.js';
import { requireNotTimedOut } from './hooks.js';
import { checkInvocation } from './options.js';
import { newInteractionToken, hashInteractionToken } from './tokens.js';
import { choicesWaiter } from './waiters.js';
import { mayRun, placeOf, type Place } from './where.js';

/**
 * D64–D65: a person runs a command (type 2), asks for autocomplete (type 4) or uses a component
 * of a bot's message (type 3). Checked in full, recorded, and sent to the bot as
 * INTERACTION_CREATE by gateway and webhook whatever its subscription (D63) — in one
 * transaction. 202 `{id}`; type 4 waits up to 3 s for the bot's choices and answers them
 * (none when the bot is silent).
 */
export async function invoke(
  d: Domain,
  p: Principal,
  body: InvokeBody,
): Promise<{ id: number; choices?: CommandChoice[] }> {
  if (p.isBot) throw forbidden('Only people invoke commands and use components');
  const prepared = body.type === 3 ? await component(d, p, body) : await command(d, p, body);
  const id = d.ids.next();
  const token = newInteractionToken();
  const now = d.clock.now();
  const interaction: Interaction = {
    id,
    token,
    type: body.type,
    channelId: prepared.place.channelId,
    ...(prepared.place.kind === 'guild' ? { guildId: prepared.place.guildId } : {}),
    user: { id: p.userId, name: p.name },
    ...(prepared.place.kind === 'guild'
      ? {
          member: {
            roles: prepared.place.access.roles.map((r) => r.id),
            permissions: prepared.place.bits,
          },
        }
      : {}),
    data: prepared.data,
    ...(prepared.message === undefined ? {} : { message: prepared.message }),
  };
  await d.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('interactions')
      .values({
        id,
        bot_id: prepared.botId,
        user_id: p.userId,
        channel_id: prepared.place.channelId,
        guild_id: prepared.place.kind === 'guild' ? prepared.place.guildId : null,
        type: body.type,
        name: prepared.name,
        token_hash: hashInteractionToken(token),
        message_id: prepared.messageId ?? null,
        created_at: now,
        responded_at: null,
        response_type: null,
        original_id: null,
        original_json: null,
        choices: null,
      })
      .execute();
    await d.events.record(trx, {
      envelope: { type: 'INTERACTION_CREATE', data: interaction },
      scope: { kind: 'bot', botId: prepared.botId },
    });
  });
  if (body.type !== 4) return { id };
  return { id, choices: await choicesWaiter.wait(d, id, AUTOCOMPLETE_WAIT_MS) };
}

interface Prepared {
  place: Place;
  botId: number;
  name: string;
  data: Interaction['data'];
  messageId?: number;
  message?: unknown;
}

/** D57/D58: USE_APPLICATION_COMMANDS where it runs, and not timed out. */
async function mayInvoke(d: Domain, p: Principal, place: Place): Promise<void> {
  if (!has(place.bits, Permission.USE_APPLICATION_COMMANDS))
    throw forbidden('Missing permission: USE_APPLICATION_COMMANDS');
  if (place.kind === 'guild') await requireNotTimedOut(d, place.guildId, p.userId);
}

async function command(
  d: Domain,
  p: Principal,
  body: Extract<InvokeBody, { type: 2 | 4 }>,
): Promise<Prepared> {
  const place = await placeOf(d, p, body.channelId);
  await mayInvoke(d, p, place);
  // Only a command of a bot that is here now (its guild's, or global) runs here.
  const row = (await runnable(d, place, body.commandId)).rows[0];
  if (!row) throw notFound('command');
  const decl = JSON.parse(row.decl) as CommandDeclaration;
  if (place.kind === 'dm' && decl.dmPermission === false)
    throw forbidden('This command does not run in DMs');
  if (!mayRun(place.bits, decl.defaultMemberPermissions))
    throw forbidden('Missing the permissions this command asks for');
  const options = await checkInvocation(d, decl, body.options ?? [], place, body.type === 4);
  return {
    place,
    botId: row.bot_id,
    name: decl.name,
    data: { commandId: row.id, name: decl.name, options: options as never },
  };
}

async function component(
  d: Domain,
  p: Principal,
  body: Extract<InvokeBody, { type: 3 }>,
): Promise<Prepared> {
  const row = await selectMessages(d.db).where('m.id', '=', body.messageId).executeTakeFirst();
  if (!row) throw notFound('message');
  const place = await placeOf(d, p, row.channel_id);
  await mayInvoke(d, p, place);
  const bot = await d.db
    .selectFrom('bots')
    .select('id')
    .where('user_id', '=', row.author_id)
    .executeTakeFirst();
  const c = findComponent(readExtra(row.extra).components, body.customId);
  if (!bot || !c) throw invalid('customId', 'names no component of this message');
  if (c.disabled) throw invalid('customId', 'names a disabled component');
  let values: string[] | undefined;
  if (c.type === 2) {
    if (c.style === 5) throw invalid('customId', 'a link button opens its url; it is not invoked');
    if (body.values !== undefined) throw invalid('values', 'a button takes no values');
  } else {
    values = body.values ?? [];
    const min = c.minValues ?? 1;
    const max = c.maxValues ?? 1;
    if (values.length < min || values.length > max)
      throw invalid('values', `must hold ${min === max ? min : `${min}–${max}`} of the options`);
    if (new Set(values).size !== values.length) throw invalid('values', 'repeat a value');
    const allowed = new Set(c.options.map((o) => o.value));
    const wrong = values.find((v) => !allowed.has(v));
    if (wrong !== undefined) throw invalid('values', `"${wrong}" is not one of the options`);
  }
  return {
    place,
    botId: bot.id,
    name: body.customId,
    data: {
      customId: body.customId,
      componentType: c.type,
      ...(values === undefined ? {} : { values }),
    },
    messageId: row.id,
    message: messageView(row),
  };
}
