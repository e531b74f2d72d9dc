import type { Message } from '../lib/types.js';
import { Icon } from '../ui/icons.js';
import { cancelReply } from './compose-state.js';

/**
 * D61: the quote bar above the composer while a reply is being written — whose message and
 * its start; ✕ (or Escape in the composer) drops the reply, the text stays.
 */
export function ReplyBar({ m, name }: { m: Message; name: string }) {
  const text = m.content || (m.attachments ? 'Attachment' : m.embeds ? 'Embed' : '');
  return (
    <div class="reply-bar" role="status" aria-label={`Replying to ${name}`}>
      <span class="small">
        Replying to <strong>{name}</strong>
      </span>
      <span class="reply-bar-text muted small">
        {text.length > 100 ? `${text.slice(0, 100)}…` : text}
      </span>
      <button
        type="button"
        class="icon-btn"
        aria-label="Cancel reply"
        onClick={() => cancelReply(m.channelId)}
      >
        <Icon name="x" size={14} />
      </button>
    </div>
  );
}
