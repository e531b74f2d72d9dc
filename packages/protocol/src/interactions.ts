import { Type, type Static } from 'typebox';
import { Id } from './ids.js';

/**
 * D64–D65: application commands, components and interactions. Shapes only; the rules a schema
 * cannot say (which fields go with which type, unique names, required before optional) are the
 * server's (domain/interactions/declarations.ts), answered as 400 naming the field.
 */

/** D64: option types. */
export const OptionType = {
  SUB_COMMAND: 1,
  STRING: 3,
  INTEGER: 4,
  BOOLEAN: 5,
  USER: 6,
  CHANNEL: 7,
  ROLE: 8,
  NUMBER: 10,
} as const;

/** D64: global and per-guild lists hold at most this many commands each. */
export const MAX_COMMANDS = 100;
/** D64: a command (or a sub-command) has at most 25 options, an option at most 25 choices. */
export const MAX_OPTIONS = 25;

export const COMMAND_NAME = '^[a-z0-9_-]{1,32}$';
const Name = Type.String({ pattern: COMMAND_NAME });
const Description = Type.String({ minLength: 1, maxLength: 100 });

export const CommandChoice = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    value: Type.Union([Type.String({ maxLength: 100 }), Type.Number()]),
  },
  { title: 'CommandChoice', additionalProperties: false },
);
export type CommandChoice = Static<typeof CommandChoice>;

const OptionTypeSchema = Type.Union(
  Object.values(OptionType).map((v) => Type.Literal(v)),
  {
    description:
      'SUB_COMMAND 1, STRING 3, INTEGER 4, BOOLEAN 5, USER 6, CHANNEL 7, ROLE 8, NUMBER 10',
  },
);

const leafFields = {
  type: OptionTypeSchema,
  name: Name,
  description: Description,
  required: Type.Optional(Type.Boolean()),
  choices: Type.Optional(Type.Array(CommandChoice, { maxItems: MAX_OPTIONS })),
  minValue: Type.Optional(Type.Number()),
  maxValue: Type.Optional(Type.Number()),
  minLength: Type.Optional(Type.Integer({ minimum: 0, maximum: 6000 })),
  maxLength: Type.Optional(Type.Integer({ minimum: 1, maximum: 6000 })),
  autocomplete: Type.Optional(Type.Boolean()),
};

/** An option of a sub-command (no further nesting). */
export const CommandLeafOption = Type.Object(leafFields, {
  title: 'CommandLeafOption',
  additionalProperties: false,
});
export type CommandLeafOption = Static<typeof CommandLeafOption>;

/** D64: an option of a command; a SUB_COMMAND carries its own `options`. */
export const CommandOption = Type.Object(
  {
    ...leafFields,
    options: Type.Optional(Type.Array(CommandLeafOption, { maxItems: MAX_OPTIONS })),
  },
  { title: 'CommandOption', additionalProperties: false },
);
export type CommandOption = Static<typeof CommandOption>;

const declFields = {
  name: Name,
  description: Description,
  options: Type.Optional(Type.Array(CommandOption, { maxItems: MAX_OPTIONS })),
  defaultMemberPermissions: Type.Optional(
    Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'bits a member needs to see and run the command (D57); null or absent: none',
    }),
  ),
  dmPermission: Type.Optional(
    Type.Boolean({ description: 'a global command runs in DMs (default true)' }),
  ),
};

/** D64: a command as a bot declares it. */
export const CommandDeclaration = Type.Object(declFields, {
  title: 'CommandDeclaration',
  additionalProperties: false,
});
export type CommandDeclaration = Static<typeof CommandDeclaration>;

export const CommandList = Type.Array(CommandDeclaration, { maxItems: MAX_COMMANDS });

/** D64: a stored command. */
export const Command = Type.Object(
  {
    id: Id,
    botId: Id,
    guildId: Type.Optional(Id),
    ...declFields,
  },
  { title: 'Command', additionalProperties: false },
);
export type Command = Static<typeof Command>;

/** D64: what a person may run in a channel, with the bot each command belongs to. */
export const ChannelCommands = Type.Object(
  {
    commands: Type.Array(Command),
    bots: Type.Array(
      Type.Object({ id: Id, userId: Id, name: Type.String() }, { additionalProperties: false }),
    ),
  },
  { title: 'ChannelCommands', additionalProperties: false },
);
export type ChannelCommands = Static<typeof ChannelCommands>;

// Components (D65) -------------------------------------------------------------------------------

/**
 * A titled schema's small integer enumerations as one `enum` (as rich.ts does for strings): the
 * schema then has the same text wherever it appears in the OpenAPI document.
 */
const intEnum = <T extends number>(values: readonly T[]) =>
  Type.Unsafe<T>({ type: 'integer', enum: [...values] });

export const ComponentType = { ACTION_ROW: 1, BUTTON: 2, SELECT: 3 } as const;
export const ButtonStyle = { PRIMARY: 1, SECONDARY: 2, SUCCESS: 3, DANGER: 4, LINK: 5 } as const;

export const Button = Type.Object(
  {
    type: intEnum([2] as const),
    style: intEnum([1, 2, 3, 4, 5] as const),
    label: Type.Optional(Type.String({ maxLength: 80 })),
    customId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    url: Type.Optional(Type.String({ maxLength: 512, pattern: '^https?://' })),
    disabled: Type.Optional(Type.Boolean()),
    emoji: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { title: 'Button', additionalProperties: false },
);
export type Button = Static<typeof Button>;

export const SelectOption = Type.Object(
  {
    label: Type.String({ minLength: 1, maxLength: 100 }),
    value: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const Select = Type.Object(
  {
    type: intEnum([3] as const),
    customId: Type.String({ minLength: 1, maxLength: 100 }),
    options: Type.Array(SelectOption, { minItems: 1, maxItems: 25 }),
    placeholder: Type.Optional(Type.String({ maxLength: 150 })),
    minValues: Type.Optional(Type.Integer({ minimum: 0, maximum: 25 })),
    maxValues: Type.Optional(Type.Integer({ minimum: 1, maximum: 25 })),
    disabled: Type.Optional(Type.Boolean()),
  },
  { title: 'Select', additionalProperties: false },
);
export type Select = Static<typeof Select>;

export const ActionRow = Type.Object(
  {
    type: intEnum([1] as const),
    components: Type.Array(Type.Union([Button, Select]), { minItems: 1, maxItems: 5 }),
  },
  { title: 'ActionRow', additionalProperties: false },
);
export type ActionRow = Static<typeof ActionRow>;

export const Components = Type.Array(ActionRow, { maxItems: 5 });

/** D61: Message.flags bits. LOADING marks the "thinking…" message of a deferred reply (D65). */
export const MessageFlags = { EPHEMERAL: 1, LOADING: 128 } as const;

/** D61: the interaction a reply answers. */
export const MessageInteraction = Type.Object(
  { id: Id, name: Type.String(), userId: Id },
  { title: 'MessageInteraction', additionalProperties: false },
);
export type MessageInteraction = Static<typeof MessageInteraction>;

// Invoking (D64–D65) -------------------------------------------------------------------------------

export const InteractionType = {
  PING: 1,
  APPLICATION_COMMAND: 2,
  MESSAGE_COMPONENT: 3,
  AUTOCOMPLETE: 4,
} as const;

const OptionValue = Type.Union([Type.String({ maxLength: 6000 }), Type.Number(), Type.Boolean()]);

export const InvokedLeafOption = Type.Object(
  {
    name: Type.String({ maxLength: 32 }),
    value: OptionValue,
    focused: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const InvokedOption = Type.Union([
  InvokedLeafOption,
  Type.Object(
    {
      name: Type.String({ maxLength: 32 }),
      options: Type.Array(InvokedLeafOption, { maxItems: MAX_OPTIONS }),
    },
    { additionalProperties: false },
  ),
]);
export type InvokedOption = Static<typeof InvokedOption>;

export const InvokeCommandBody = Type.Object(
  {
    type: Type.Union([Type.Literal(2), Type.Literal(4)]),
    channelId: Id,
    commandId: Id,
    options: Type.Optional(Type.Array(InvokedOption, { maxItems: MAX_OPTIONS })),
  },
  { title: 'InvokeCommandBody', additionalProperties: false },
);
export const InvokeComponentBody = Type.Object(
  {
    type: Type.Literal(3),
    messageId: Id,
    customId: Type.String({ minLength: 1, maxLength: 100 }),
    values: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 25 })),
  },
  { title: 'InvokeComponentBody', additionalProperties: false },
);
export const InvokeBody = Type.Union([InvokeCommandBody, InvokeComponentBody], {
  title: 'InvokeBody',
});
export type InvokeBody = Static<typeof InvokeBody>;

export const Invoked = Type.Object(
  {
    id: Id,
    /** type 4 only: the bot's choices (empty when it did not answer within 3 s) */
    choices: Type.Optional(Type.Array(CommandChoice)),
  },
  { title: 'Invoked', additionalProperties: false },
);

// Responding (D65) ---------------------------------------------------------------------------------

export const CallbackType = {
  REPLY: 4,
  DEFER: 5,
  DEFER_UPDATE: 6,
  UPDATE: 7,
  AUTOCOMPLETE: 8,
} as const;

/** A message as a bot writes it in a callback, a follow-up or an edit of @original. */
export const ResponseMessage = Type.Object(
  {
    content: Type.Optional(Type.String({ maxLength: 2000 })),
    components: Type.Optional(Components),
    flags: Type.Optional(Type.Integer({ minimum: 0, maximum: 1, description: '1 = ephemeral' })),
  },
  { title: 'ResponseMessage', additionalProperties: false },
);
export type ResponseMessage = Static<typeof ResponseMessage>;

export const CallbackBody = Type.Union(
  [
    Type.Object(
      { type: Type.Union([Type.Literal(4), Type.Literal(7)]), data: ResponseMessage },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Union([Type.Literal(5), Type.Literal(6)]),
        data: Type.Optional(
          Type.Object(
            { flags: Type.Optional(Type.Integer({ minimum: 0, maximum: 1 })) },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal(8),
        data: Type.Object(
          { choices: Type.Array(CommandChoice, { maxItems: MAX_OPTIONS }) },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  ],
  { title: 'CallbackBody' },
);
export type CallbackBody = Static<typeof CallbackBody>;

/** D65: what INTERACTION_CREATE carries to the bot. */
export interface Interaction {
  id: number;
  /** the interaction's own secret: authorizes the callback and follow-ups for 15 minutes */
  token: string;
  type: 2 | 3 | 4;
  channelId: number;
  guildId?: number;
  user: { id: number; name: string };
  member?: { roles: number[]; permissions: number };
  data:
    | { commandId: number; name: string; options: InvokedOption[] }
    | { customId: string; componentType: 2 | 3; values?: string[] };
  /** type 3: the message whose component was used */
  message?: unknown;
  locale?: string;
}

/** D65: the callback and follow-ups work this long after the invocation. */
export const INTERACTION_WINDOW_MS = 15 * 60 * 1000;
/** D64: the server waits this long for autocomplete choices. */
export const AUTOCOMPLETE_WAIT_MS = 3000;
