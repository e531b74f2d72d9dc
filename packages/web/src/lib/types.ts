/**
 * The wire shapes the app uses, all from @parley/protocol (no hand-copied shapes). Types only:
 * the TypeBox schemas themselves stay out of the bundle.
 */
export type {
  AuthResult,
  Ban,
  Bot,
  Channel,
  CreatedBot,
  Delivery,
  DeliveryAttempt,
  DeliveryDetail,
  DmChannelRef,
  DmSummary,
  ErrorBody,
  EventDataMap,
  Invite,
  InvitePreview,
  Member,
  MemberSummary,
  MemberUser,
  Message,
  MessageList,
  NotificationLevel,
  NotificationSetting,
  OwnedBot,
  PeopleEventDataMap,
  RichEventDataMap,
  Reaction,
  Attachment,
  Embed,
  ReadState,
  Role,
  SessionInfo as Session,
  UploadedFile,
  UploadQuota,
  User,
  AppGuild as Guild,
  PersonReady as ReadyPerson,
} from '@parley/protocol';
import type { Delivery } from '@parley/protocol';

export type DeliveryState = Delivery['state'];
