import {
  ALL_PERMISSIONS,
  OptionType,
  type CommandDeclaration,
  type CommandLeafOption,
  type CommandOption,
} from '@parley/protocol';
import { invalid } from '../../errors/app-error.js';

/**
 * D64: the rules of a command declaration that its schema cannot state. The schema (protocol
 * interactions.ts) has already checked shapes, lengths and counts; this answers 400 naming the
 * field for everything else, so a list the server accepts is one every client can render and
 * every invocation can be checked against.
 */
export function checkDeclarations(list: readonly CommandDeclaration[]): void {
  const names = new Set<string>();
  list.forEach((c, i) => {
    const at = `[${i}]`;
    if (names.has(c.name)) throw invalid(`${at}.name`, `repeats the command name "${c.name}"`);
    names.add(c.name);
    const p = c.defaultMemberPermissions;
    if (p !== undefined && p !== null && (p & ~ALL_PERMISSIONS) !== 0)
      throw invalid(`${at}.defaultMemberPermissions`, 'has unknown permission bits (D57)');
    const options = c.options ?? [];
    const subs = options.filter((o) => o.type === OptionType.SUB_COMMAND).length;
    // A command is either a set of sub-commands or a command with options, never both.
    if (subs > 0 && subs !== options.length)
      throw invalid(`${at}.options`, 'mixes SUB_COMMAND with other option types');
    checkOptions(options, `${at}.options`, true);
  });
}

function checkOptions(
  options: readonly (CommandOption | CommandLeafOption)[],
  at: string,
  top: boolean,
): void {
  const names = new Set<string>();
  let optionalSeen = false;
  options.forEach((o, i) => {
    const f = `${at}[${i}]`;
    if (names.has(o.name)) throw invalid(`${f}.name`, `repeats the option name "${o.name}"`);
    names.add(o.name);
    if (o.type === OptionType.SUB_COMMAND) {
      if (!top) throw invalid(`${f}.type`, 'a SUB_COMMAND cannot hold another SUB_COMMAND');
      for (const k of [
        'required',
        'choices',
        'minValue',
        'maxValue',
        'minLength',
        'maxLength',
        'autocomplete',
      ] as const)
        if (o[k] !== undefined) throw invalid(`${f}.${k}`, 'does not apply to a SUB_COMMAND');
      const sub = (o as CommandOption).options ?? [];
      if (sub.some((s) => s.type === OptionType.SUB_COMMAND))
        throw invalid(`${f}.options`, 'a SUB_COMMAND cannot hold another SUB_COMMAND');
      checkOptions(sub, `${f}.options`, false);
      return;
    }
    if ('options' in o && o.options !== undefined)
      throw invalid(`${f}.options`, 'only a SUB_COMMAND has options');
    // Required options come first, as every client lays them out (and Discord requires).
    if (o.required) {
      if (optionalSeen)
        throw invalid(`${f}.required`, 'required options must come before optional ones');
    } else optionalSeen = true;
    checkLeaf(o, f);
  });
}

function checkLeaf(o: CommandLeafOption, f: string): void {
  const numeric = o.type === OptionType.INTEGER || o.type === OptionType.NUMBER;
  const text = o.type === OptionType.STRING;
  if (!numeric && (o.minValue !== undefined || o.maxValue !== undefined))
    throw invalid(
      `${f}.${o.minValue !== undefined ? 'minValue' : 'maxValue'}`,
      'applies to INTEGER and NUMBER options only',
    );
  if (!text && (o.minLength !== undefined || o.maxLength !== undefined))
    throw invalid(
      `${f}.${o.minLength !== undefined ? 'minLength' : 'maxLength'}`,
      'applies to STRING options only',
    );
  if (o.minValue !== undefined && o.maxValue !== undefined && o.minValue > o.maxValue)
    throw invalid(`${f}.minValue`, 'is greater than maxValue');
  if (o.minLength !== undefined && o.maxLength !== undefined && o.minLength > o.maxLength)
    throw invalid(`${f}.minLength`, 'is greater than maxLength');
  if (o.type === OptionType.INTEGER)
    for (const k of ['minValue', 'maxValue'] as const) {
      const v = o[k];
      if (v !== undefined && !Number.isSafeInteger(v))
        throw invalid(`${f}.${k}`, 'must be an integer');
    }
  if (o.autocomplete && !(numeric || text))
    throw invalid(`${f}.autocomplete`, 'applies to STRING, INTEGER and NUMBER options only');
  if (o.choices === undefined) return;
  if (!(numeric || text))
    throw invalid(`${f}.choices`, 'apply to STRING, INTEGER and NUMBER options only');
  if (o.autocomplete) throw invalid(`${f}.autocomplete`, 'cannot be combined with choices');
  o.choices.forEach((c, j) => {
    const ok =
      (text && typeof c.value === 'string') ||
      (o.type === OptionType.INTEGER &&
        typeof c.value === 'number' &&
        Number.isSafeInteger(c.value)) ||
      (o.type === OptionType.NUMBER && typeof c.value === 'number' && Number.isFinite(c.value));
    if (!ok) throw invalid(`${f}.choices[${j}].value`, 'does not match the option type');
  });
}
