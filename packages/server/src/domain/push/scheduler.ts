import type { Message } from '@parley/protocol';

/**
 * D66: what the domain tells the push sender (push/sender.ts): a message committed. Called after
 * the send's transaction, never inside it; the sender decides whom to notify and when.
 */
export interface PushScheduler {
  messageCreated(message: Message): void;
  /** a subscription was just made on this node (the sender stops skipping its planning) */
  subscribed(): void;
}
