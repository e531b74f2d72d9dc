import type { Message } from '../lib/types.js';
import { Icon } from '../ui/icons.js';
import type { MentionNames } from '../ui/markdown.js';
import { cancelReply } from './compose-state.js';
import { previewText } from './mention-autocomplete.js';

/**
 * D61: the quote bar above the composer while a reply is being written — whose message and
 * its start; ✕ (or Escape in the composer) drops the reply, the text stays.
 */
export function ReplyBar({ m, name, names }: { m: Message; name: string; names?: MentionNames }) {
  const text = names ? previewText(m, names, 100) : m.content;
  return (
    <div class="reply-bar" role="status" aria-label={`Replying to ${name}`}>
      <span class="small">
        Replying to <strong>{name}</strong>
      </span>
      <span class="reply-bar-text muted small">{text}</span>
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
