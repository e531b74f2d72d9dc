import type {
  ActionRow,
  Attachment,
  Embed,
  MessageInteraction,
  MessageReference,
} from '@parley/protocol';

/**
 * D61: what a message carries beyond D17–D18, stored as one JSON column written with the
 * message itself (no extra row per send; null when it carries nothing).
 */
export interface MessageExtra {
  reference?: MessageReference;
  mentions?: number[];
  mentionRoles?: number[];
  mentionEveryone?: true;
  attachments?: Attachment[];
  embeds?: Embed[];
  /** D65: a bot's components */
  components?: ActionRow[];
  /** D61/D65: the interaction a reply answers */
  interaction?: MessageInteraction;
}

/** `extra` as it is stored: its empty parts left out, null when every part is (D56: a plain message). */
export function storedExtra(x: MessageExtra): MessageExtra | null {
  const out: MessageExtra = {};
  if (x.reference) out.reference = x.reference;
  if (x.mentions && x.mentions.length > 0) out.mentions = x.mentions;
  if (x.mentionRoles && x.mentionRoles.length > 0) out.mentionRoles = x.mentionRoles;
  if (x.mentionEveryone) out.mentionEveryone = true;
  if (x.attachments && x.attachments.length > 0) out.attachments = x.attachments;
  if (x.embeds && x.embeds.length > 0) out.embeds = x.embeds;
  if (x.components && x.components.length > 0) out.components = x.components;
  if (x.interaction) out.interaction = x.interaction;
  return Object.keys(out).length === 0 ? null : out;
}

/** The stored text of `extra`: null when every part is empty. */
export function storeExtra(x: MessageExtra): string | null {
  const stored = storedExtra(x);
  return stored === null ? null : JSON.stringify(stored);
}

export function readExtra(text: string | null | undefined): MessageExtra {
  if (text === null || text === undefined || text === '') return {};
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null ? v : {};
  } catch {
    return {};
  }
}
