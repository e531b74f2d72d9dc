import { useState } from 'preact/hooks';
import { del, describe, put } from '../lib/api.js';
import type { Message } from '../lib/types.js';
import { dispatch, type ChannelLog } from '../state/store.js';
import { Icon } from '../ui/icons.js';
import { toast } from '../ui/toast.js';
import { startReply } from './compose-state.js';
import { pinsBase } from './pins-panel.js';
import { react, ReactionPicker } from './reaction-picker.js';

/** D63: pin (PUT) or unpin (DELETE) …/pins/:messageId; my copy changes at once (PINNED). */
export async function setPinned(log: ChannelLog, m: Message, pinned: boolean): Promise<void> {
  const url = `${pinsBase(log)}/${m.id}`;
  try {
    if (pinned) await put(url);
    else await del(url);
    dispatch({ type: 'PINNED', d: { channelId: m.channelId, messageId: m.id, pinned } });
  } catch (x) {
    toast(describe(x));
  }
}

/**
 * The message menu's conversation actions (issue #24): Reply (the composer's quote bar, D61),
 * Add a reaction (the picker, D63), Pin / Unpin (D63, with MANAGE_MESSAGES in a guild).
 */
export function MessageMenu(props: {
  m: Message;
  log: ChannelLog;
  canReact: boolean;
  canPin: boolean;
  canReply: boolean;
}) {
  const { m, log } = props;
  const [picking, setPicking] = useState(false);
  return (
    <>
      {props.canReply && (
        <button
          type="button"
          class="icon-btn"
          aria-label="Reply"
          title="Reply"
          onClick={() => startReply(m)}
        >
          <Icon name="reply" size={16} />
        </button>
      )}
      {props.canReact && (
        <button
          type="button"
          class="icon-btn"
          aria-label="Add reaction"
          title="Add reaction"
          onClick={() => setPicking(true)}
        >
          <Icon name="smile" size={16} />
        </button>
      )}
      {props.canPin && (
        <button
          type="button"
          class="icon-btn"
          aria-label={m.pinned ? 'Unpin message' : 'Pin message'}
          title={m.pinned ? 'Unpin' : 'Pin'}
          onClick={() => void setPinned(log, m, !m.pinned)}
        >
          <Icon name="pin" size={16} />
        </button>
      )}
      {/* one picker in the DOM only while it is open (the list holds up to 180 messages) */}
      {picking && (
        <ReactionPicker
          open={picking}
          onClose={() => setPicking(false)}
          onPick={(e) => void react(log, m.id, e, true)}
        />
      )}
    </>
  );
}
