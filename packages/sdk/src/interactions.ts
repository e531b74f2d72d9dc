import type {
  ActionRow,
  Button,
  CommandDeclaration,
  Interaction,
  InvokedOption,
  Message,
  ResponseMessage,
  Select,
} from '@parley/protocol';

/**
 * D64–D65 helpers for bots: component builders and an interaction's answers (reply, defer,
 * follow-up, edit of @original, update). The interaction's token authorizes every answer for 15
 * minutes — no Authorization header, so these calls use plain fetch against `{url}/api/v1`.
 */

/** A button (style 1 primary, 2 secondary, 3 success, 4 danger); `link` makes a style-5 one. */
export const button = (
  customId: string,
  label: string,
  o: { style?: 1 | 2 | 3 | 4; disabled?: boolean; emoji?: string } = {},
): Button => ({ type: 2, style: o.style ?? 1, label, customId, ...rest(o) });

export const linkButton = (url: string, label: string): Button => ({
  type: 2,
  style: 5,
  label,
  url,
});

export const select = (
  customId: string,
  options: Array<{ label: string; value: string; description?: string }>,
  o: { placeholder?: string; minValues?: number; maxValues?: number; disabled?: boolean } = {},
): Select => ({ type: 3, customId, options, ...o });

/** An action row: up to five buttons, or one select. */
export const row = (...components: Array<Button | Select>): ActionRow => ({ type: 1, components });

function rest(o: { disabled?: boolean; emoji?: string }): Partial<Button> {
  const out: Partial<Button> = {};
  if (o.disabled !== undefined) out.disabled = o.disabled;
  if (o.emoji !== undefined) out.emoji = o.emoji;
  return out;
}

// Commands declared in code, with their options' types (D64) ------------------------------------

/** A value a person gave an option: STRING → string, BOOLEAN → boolean, the rest → number (ids). */
export type OptionValue = string | number | boolean;

/** An option as declared (readonly, so `defineCommand` keeps the literal names and types). */
export interface LeafOptionSpec {
  readonly type: 3 | 4 | 5 | 6 | 7 | 8 | 10;
  readonly name: string;
  readonly description: string;
  readonly required?: boolean;
  readonly choices?: ReadonlyArray<{ readonly name: string; readonly value: string | number }>;
  readonly minValue?: number;
  readonly maxValue?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly autocomplete?: boolean;
}
export interface SubCommandSpec {
  readonly type: 1;
  readonly name: string;
  readonly description: string;
  readonly options?: readonly LeafOptionSpec[];
}
/** A command as declared: D64's CommandDeclaration, readonly. */
export interface CommandSpec {
  readonly name: string;
  readonly description: string;
  readonly options?: readonly LeafOptionSpec[] | readonly SubCommandSpec[];
  readonly defaultMemberPermissions?: number | null;
  readonly dmPermission?: boolean;
}

type ValueOf<O extends LeafOptionSpec> = O extends {
  readonly choices: ReadonlyArray<{ readonly value: infer V }>;
}
  ? V
  : O['type'] extends 3
    ? string
    : O['type'] extends 5
      ? boolean
      : number;

/** The options object of a list of leaf options: required ones present, the others optional. */
export type LeafOptions<L extends readonly LeafOptionSpec[]> = {
  [O in L[number] as O extends { readonly required: true } ? O['name'] : never]: ValueOf<O>;
} & {
  [O in L[number] as O extends { readonly required: true } ? never : O['name']]?: ValueOf<O>;
};

/** The options a handler of this command receives (a sub-command's own, when it has them). */
export type CommandOptions<C extends CommandSpec> = C extends {
  readonly options: readonly SubCommandSpec[];
}
  ? C['options'][number] extends infer S
    ? S extends SubCommandSpec
      ? S['options'] extends readonly LeafOptionSpec[]
        ? LeafOptions<S['options']>
        : Record<never, never>
      : never
    : never
  : C extends { readonly options: readonly LeafOptionSpec[] }
    ? LeafOptions<C['options']>
    : Record<never, never>;

/** The sub-command names of a command (undefined when it has none). */
export type SubCommandName<C extends CommandSpec> = C extends {
  readonly options: readonly SubCommandSpec[];
}
  ? C['options'][number]['name']
  : undefined;

/**
 * Declare a command in code (D64), keeping its literal option names and types so that
 * `bot.command(roll, (i) => i.options.sides)` is typed (`sides: number`). Returns its argument.
 */
export const defineCommand = <const C extends CommandSpec>(command: C): C => command;

/** The command as the server takes it (the readonly spec is the same JSON). */
export const declaration = (c: CommandSpec): CommandDeclaration => c as CommandDeclaration;

export type ReplyInput = string | (ResponseMessage & { ephemeral?: boolean });

const message = (r: ReplyInput): ResponseMessage => {
  if (typeof r === 'string') return { content: r };
  const { ephemeral, ...m } = r;
  return ephemeral ? { ...m, flags: 1 } : m;
};

/**
 * One interaction as a handler sees it. `reply`, `defer`, `deferUpdate`, `update` and
 * `autocomplete` are the one callback (a second is refused by the server with 409, and here
 * before any request); `followUp` and `editReply` come after, for 15 minutes (D65). A webhook
 * bot's answer may travel in the webhook's response body instead (bot.webhookHandler sets
 * `respond`; it returns false once that response has gone, and the answer then takes the
 * callback route).
 */
export class InteractionContext<O extends object = Record<string, OptionValue>> {
  /** set when the answer may travel in a webhook's response instead of a request */
  respond: ((body: { type: number; data?: unknown }) => unknown) | undefined;
  private answered = false;

  constructor(
    readonly interaction: Interaction,
    private readonly o: { url: string; botId: number; fetch?: typeof fetch },
  ) {}

  get id(): number {
    return this.interaction.id;
  }
  /** 2 a command, 3 a component, 4 autocomplete */
  get type(): Interaction['type'] {
    return this.interaction.type;
  }
  get user(): Interaction['user'] {
    return this.interaction.user;
  }
  get channelId(): number {
    return this.interaction.channelId;
  }
  get guildId(): number | undefined {
    return this.interaction.guildId;
  }
  /** whether the callback has been made (here, or in the webhook's response) */
  get replied(): boolean {
    return this.answered;
  }

  /** the command's name (types 2 and 4) */
  get commandName(): string | undefined {
    const d = this.interaction.data;
    return 'name' in d ? d.name : undefined;
  }
  /** the sub-command run, when the command has sub-commands */
  get subcommand(): string | undefined {
    const d = this.interaction.data;
    if (!('options' in d)) return undefined;
    const first = d.options[0];
    return first && 'options' in first ? first.name : undefined;
  }
  /** a component's customId (type 3) */
  get customId(): string | undefined {
    const d = this.interaction.data;
    return 'customId' in d ? d.customId : undefined;
  }
  /** a select's chosen values (type 3) */
  get values(): string[] {
    const d = this.interaction.data;
    return 'customId' in d ? (d.values ?? []) : [];
  }
  /** the message whose component was used (type 3) */
  get message(): Message | undefined {
    return this.interaction.message as Message | undefined;
  }
  /** autocomplete (type 4): the option being typed and its partial value */
  get focused(): { name: string; value: OptionValue } | undefined {
    for (const x of this.leaves())
      if ('value' in x && x.focused) return { name: x.name, value: x.value };
    return undefined;
  }

  /** a command's options by name (a sub-command's own, when there is one) */
  get options(): O {
    const out: Record<string, OptionValue> = {};
    for (const x of this.leaves()) if ('value' in x) out[x.name] = x.value;
    return out as unknown as O;
  }

  private leaves(): InvokedOption[] {
    const d = this.interaction.data;
    if (!('options' in d)) return [];
    const first = d.options[0];
    return first && 'options' in first ? first.options : d.options;
  }

  reply(r: ReplyInput): Promise<void> {
    return this.callback(4, message(r));
  }
  defer(o: { ephemeral?: boolean } = {}): Promise<void> {
    return this.callback(5, o.ephemeral ? { flags: 1 } : undefined);
  }
  deferUpdate(): Promise<void> {
    return this.callback(6);
  }
  update(r: ReplyInput): Promise<void> {
    return this.callback(7, message(r));
  }
  autocomplete(choices: Array<{ name: string; value: string | number }>): Promise<void> {
    return this.callback(8, { choices });
  }

  followUp(r: ReplyInput): Promise<Message> {
    return this.call('POST', `/webhooks/${this.o.botId}/${this.interaction.token}`, message(r));
  }
  editReply(r: ReplyInput): Promise<Message> {
    const { flags: _f, ...m } = message(r);
    return this.call(
      'PATCH',
      `/webhooks/${this.o.botId}/${this.interaction.token}/messages/@original`,
      m,
    );
  }

  private async callback(type: number, data?: unknown): Promise<void> {
    if (this.answered) throw new Error('This interaction has already been answered');
    this.answered = true;
    const body = data === undefined ? { type } : { type, data };
    const send = this.respond;
    this.respond = undefined;
    // false: the webhook's response has already gone; the answer takes the callback route.
    if (send && send(body) !== false) return;
    await this.call(
      'POST',
      `/interactions/${this.interaction.id}/${this.interaction.token}/callback`,
      body,
    );
  }

  private async call<T>(method: string, path: string, body: unknown): Promise<T> {
    const f = this.o.fetch ?? globalThis.fetch.bind(globalThis);
    const res = await f(`${this.o.url.replace(/\/+$/, '')}/api/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
}
