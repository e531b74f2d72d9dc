import { effect, signal } from '@preact/signals';
import './conversation.css';
import type { Message } from '../lib/types.js';
import { me } from '../state/store.js';

/**
 * What the composer and the message list share beyond the store (issue #24): the message a
 * channel's next message replies to (D61 `messageReference`, shown as the quote bar), and the
 * message being edited when Up-arrow in an empty composer asked for my last one.
 */
export const replyingTo = signal<ReadonlyMap<number, Message>>(new Map());

export function startReply(m: Message): void {
  replyingTo.value = new Map(replyingTo.value).set(m.channelId, m);
  // the composer takes the focus, so the reply is typed at once
  queueMicrotask(() =>
    document.querySelector<HTMLTextAreaElement>('.composer-box textarea')?.focus(),
  );
}

export function cancelReply(channelId: number): void {
  if (!replyingTo.value.has(channelId)) return;
  const next = new Map(replyingTo.value);
  next.delete(channelId);
  replyingTo.value = next;
}

/** the id of the message opened for editing from the composer (Up-arrow), null when none */
export const editingId = signal<number | null>(null);

// The store's one reset point (logout) forgets the person; what they were writing goes with it.
effect(() => {
  void me.value;
  replyingTo.value = new Map();
  editingId.value = null;
});
