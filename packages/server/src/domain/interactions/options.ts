import {
  isIdText,
  OptionType,
  type CommandDeclaration,
  type CommandLeafOption,
  type InvokedOption,
} from '@parley/protocol';
import { invalid } from '../../errors/app-error.js';
import type { Domain } from '../context.js';
import type { Place } from './where.js';

/** An option as the bot receives it: its declared type beside the person's value. */
export type DeliveredOption =
  | { name: string; type: number; value: string | number | boolean; focused?: true }
  | { name: string; type: 1; options: DeliveredOption[] };

/**
 * D64: an invocation's options checked against the declaration, answered 400 naming the option
 * (`options.<name>` or `options.<sub>.<name>`): unknown or repeated names, types, choices,
 * ranges, lengths, required ones, and USER / CHANNEL / ROLE values that must name a member, a
 * channel and a role of this guild. `focus` (autocomplete, type 4): exactly one option is
 * focused and declared with autocomplete; its value is the partial input, checked only for type,
 * and nothing is required yet.
 */
export async function checkInvocation(
  d: Domain,
  decl: CommandDeclaration,
  given: readonly InvokedOption[],
  place: Place,
  focus: boolean,
): Promise<DeliveredOption[]> {
  const declared = decl.options ?? [];
  const focused: string[] = [];
  let out: DeliveredOption[];
  if (declared.some((o) => o.type === OptionType.SUB_COMMAND)) {
    const first = given[0];
    if (given.length !== 1 || first === undefined || !('options' in first))
      throw invalid('options', 'must name exactly one sub-command');
    const sub = declared.find((o) => o.name === first.name);
    if (!sub) throw invalid(`options.${first.name}`, 'is not a sub-command of this command');
    const inner = await checkLeaves(
      d,
      sub.options ?? [],
      first.options,
      place,
      focus,
      `options.${sub.name}`,
      focused,
    );
    out = [{ name: sub.name, type: 1, options: inner }];
  } else {
    out = await checkLeaves(d, declared, given, place, focus, 'options', focused);
  }
  if (focus && focused.length !== 1)
    throw invalid('options', 'an autocomplete request has exactly one focused option');
  if (!focus && focused.length > 0)
    throw invalid(`${focused[0]}.focused`, 'only in autocomplete (type 4)');
  return out;
}

async function checkLeaves(
  d: Domain,
  declared: readonly CommandLeafOption[],
  given: readonly InvokedOption[],
  place: Place,
  focus: boolean,
  at: string,
  focused: string[],
): Promise<DeliveredOption[]> {
  const seen = new Set<string>();
  const out: DeliveredOption[] = [];
  for (const g of given) {
    const f = `${at}.${g.name}`;
    if (seen.has(g.name)) throw invalid(f, 'is given twice');
    seen.add(g.name);
    const o = declared.find((x) => x.name === g.name);
    if (!o) throw invalid(f, 'is not an option of this command');
    if (!('value' in g)) throw invalid(f, 'takes a value, not options');
    const isFocused = g.focused === true;
    if (isFocused) {
      focused.push(f);
      if (!o.autocomplete) throw invalid(f, 'is not declared with autocomplete');
    }
    const value = await checkValue(d, o, g.value, place, f, isFocused);
    out.push(
      isFocused
        ? { name: o.name, type: o.type, value, focused: true }
        : { name: o.name, type: o.type, value },
    );
  }
  if (!focus)
    for (const o of declared)
      if (o.required && !seen.has(o.name)) throw invalid(`${at}.${o.name}`, 'is required');
  return out;
}

const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

async function checkValue(
  d: Domain,
  o: CommandLeafOption,
  v: string | number | boolean,
  place: Place,
  f: string,
  partial: boolean,
): Promise<string | number | boolean> {
  switch (o.type) {
    case OptionType.STRING: {
      if (typeof v !== 'string') throw invalid(f, 'must be a string');
      if (partial) return v;
      const n = codePoints(v);
      if (n < (o.minLength ?? 0)) throw invalid(f, `must be at least ${o.minLength} characters`);
      if (n > (o.maxLength ?? 6000))
        throw invalid(f, `must be at most ${o.maxLength ?? 6000} characters`);
      return choice(o, v, f);
    }
    case OptionType.INTEGER:
    case OptionType.NUMBER: {
      const num = typeof v === 'number' ? v : NaN;
      const ok = o.type === OptionType.INTEGER ? Number.isSafeInteger(num) : Number.isFinite(num);
      if (!ok)
        throw invalid(f, o.type === OptionType.INTEGER ? 'must be an integer' : 'must be a number');
      if (partial) return num;
      if (o.minValue !== undefined && num < o.minValue)
        throw invalid(f, `must be at least ${o.minValue}`);
      if (o.maxValue !== undefined && num > o.maxValue)
        throw invalid(f, `must be at most ${o.maxValue}`);
      return choice(o, num, f);
    }
    case OptionType.BOOLEAN:
      if (typeof v !== 'boolean') throw invalid(f, 'must be true or false');
      return v;
    case OptionType.USER:
    case OptionType.CHANNEL:
    case OptionType.ROLE:
      return resolve(d, o.type, idOf(v, f), place, f);
    default:
      throw invalid(f, 'has an unknown type');
  }
}

function choice<T extends string | number>(o: CommandLeafOption, v: T, f: string): T {
  if (o.choices && !o.choices.some((c) => c.value === v))
    throw invalid(f, 'is not one of its choices');
  return v;
}

function idOf(v: string | number | boolean, f: string): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
  if (typeof v === 'string' && isIdText(v)) return Number(v);
  throw invalid(f, 'must be an id');
}

/** USER: a member of the guild (in a DM, one of its two parties); CHANNEL / ROLE: the guild's. */
async function resolve(
  d: Domain,
  type: number,
  id: number,
  place: Place,
  f: string,
): Promise<number> {
  if (place.kind === 'dm') {
    if (type === OptionType.USER) {
      const party = await d.db
        .selectFrom('channels')
        .select('id')
        .where('id', '=', place.channelId)
        .where((eb) => eb.or([eb('dm_user_low', '=', id), eb('dm_user_high', '=', id)]))
        .executeTakeFirst();
      if (party) return id;
      throw invalid(f, 'is not a user of this DM');
    }
    if (type === OptionType.CHANNEL && id === place.channelId) return id;
    throw invalid(
      f,
      type === OptionType.ROLE ? 'names no role here (a DM has none)' : 'is not this DM',
    );
  }
  const g = place.guildId;
  const found =
    type === OptionType.USER
      ? await d.db
          .selectFrom('members')
          .select('user_id as id')
          .where('guild_id', '=', g)
          .where('user_id', '=', id)
          .executeTakeFirst()
      : type === OptionType.CHANNEL
        ? await d.db
            .selectFrom('channels')
            .select('id')
            .where('guild_id', '=', g)
            .where('id', '=', id)
            .executeTakeFirst()
        : await d.db
            .selectFrom('roles')
            .select('id')
            .where('guild_id', '=', g)
            .where('id', '=', id)
            .executeTakeFirst();
  if (!found)
    throw invalid(
      f,
      type === OptionType.USER
        ? 'is not a member of this guild'
        : type === OptionType.CHANNEL
          ? 'is not a channel of this guild'
          : 'is not a role of this guild',
    );
  return id;
}
