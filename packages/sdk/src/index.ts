/**
 * @parley/sdk: the TypeScript SDK for Parley bots (see docs/protocol.md for the contract).
 */
export type {
  AllowedMentions,
  Attachment,
  BotEventDataMap,
  BotEventEnvelope,
  BotEventType,
  ChannelPinsUpdateData,
  Embed,
  EmbedInput,
  MessageEmbedsUpdateData,
  MessageReference,
  Reaction,
  ReactionEventData,
  ReferencedMessage,
  RichEventDataMap,
  RichEventType,
  SubscribableEventType,
  Bot as BotRecord,
  BotUser,
  Channel,
  ChannelSummary,
  DmChannelRef,
  EditedMessage,
  ErrorCode,
  EventDataMap,
  EventEnvelope,
  EventType,
  GatewayErrorData,
  Member,
  MemberSummary,
  Message,
  MessageList,
  ReadyData,
  Command,
  CommandDeclaration,
  ChannelCommands,
  Interaction,
  InteractionEventDataMap,
  ResponseMessage,
  ActionRow,
  Button,
  Select,
  UploadedFile,
  UploadQuota,
} from '@parley/protocol';
export { ParleyError, errorFromBody } from './errors.js';
export type { DebugEvent, DebugListener } from './debug.js';
export { splitContent, MAX_CONTENT } from './split.js';
export {
  RestClient,
  type RestOptions,
  type MsgType,
  type PageOptions,
  type HistoryOptions,
  type MemberPageOptions,
  type SendOptions,
  type ReactionUsers,
} from './rest.js';
export { EmbedBuilder, embedsJSON } from './embed.js';
export {
  escapeMarkdown,
  md,
  userMention,
  roleMention,
  channelMention,
  everyoneMention,
  hereMention,
} from './markdown.js';
export { msgTypeOf, MAX_FILE_BYTES, type UploadSource, type UploadOptions } from './upload.js';
export {
  GatewayClient,
  type GatewayOptions,
  type GatewayEvents,
  type WebSocketFactory,
} from './gateway.js';
export {
  verifyWebhook,
  webhookHandler,
  type WebhookHandler,
  type WebhookHandlerOptions,
  type VerifyOptions,
  type HeaderBag,
} from './webhook.js';
export { OptionType, InteractionType, CallbackType, MessageFlags } from '@parley/protocol';
export {
  Bot,
  type BotOptions,
  type BotMessage,
  type MessageActions,
  type CommandInteraction,
  type ComponentInteraction,
  type AutocompleteInteraction,
} from './bot.js';
export * from './interactions.js';
