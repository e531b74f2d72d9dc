import { MAX_CONTENT_CODEPOINTS } from '@parley/protocol';
import { useRef, useState } from 'preact/hooks';
import { describe, post, upload } from '../lib/api.js';
import type { Message } from '../lib/types.js';
import { me, type ChannelLog } from '../state/store.js';
import { Icon } from '../ui/icons.js';
import { CommandPicker, type PickerKeys } from './command-picker.js';
import type { MentionNames } from '../ui/markdown.js';
import { AttachmentTray, MAX_ATTACHMENTS, useTray } from './attachment-tray.js';
import { cancelReply, editingId, replyingTo } from './compose-state.js';
import { useMentionAutocomplete, type MentionSource } from './mention-autocomplete.js';
import { ReplyBar } from './reply-bar.js';

const ACCEPT =
  '.jpg,.jpeg,.png,.gif,.mp3,.wav,.mp4,image/jpeg,image/png,image/gif,audio/mpeg,audio/wav,video/mp4';

/**
 * Enter sends, Shift+Enter is a newline; the D14 limit (2000 code points) is counted as one
 * types and sending is refused before the server has to. Files come by the picker, by drop on
 * the channel (see ChannelView) or by paste, into the tray (attachment-tray.tsx): D61 sends
 * them with the text as one message. Issue #24: `@`/`#` autocomplete (D62 mention syntax), the
 * reply quote bar (D61 `messageReference`), Up-arrow in an empty composer edits my last message.
 */
export function Composer(props: {
  log: ChannelLog;
  placeholder: string;
  disabled?: string | undefined;
  onTyping?: (() => void) | undefined;
  uploadRef?: { current: ((files: File[]) => void) | null };
  /** who and what `@` and `#` offer (D62) */
  mentions?: MentionSource | undefined;
  /** how mentions read, for the reply bar (D62) */
  names?: MentionNames | undefined;
}) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const input = useRef<HTMLTextAreaElement>(null);
  const picker = useRef<HTMLInputElement>(null);
  const commandKeys = useRef<PickerKeys | null>(null); // D64: `/` opens the command picker
  const length = [...text].length; // D14 counts code points
  const over = length - MAX_CONTENT_CODEPOINTS;

  const tray = useTray();
  const replying = replyingTo.value.get(props.log.channelId);
  const ac = useMentionAutocomplete(props.mentions, () => input.current, setText);

  const send = async () => {
    const files = tray.files;
    if ((text.trim() === '' && files.length === 0) || over > 0 || busy) return;
    const content = text;
    setError(null);
    try {
      // D61: 1–10 uploads of this platform as `attachments`; the text is their caption
      const attachments: string[] = [];
      for (const [i, p] of files.entries()) {
        setBusy(
          files.length > 1 ? `Uploading ${i + 1} of ${files.length}…` : `Uploading ${p.file.name}…`,
        );
        attachments.push((await upload(p.file)).url);
      }
      setBusy(null);
      const body: Record<string, unknown> = { content };
      if (attachments.length) body['attachments'] = attachments;
      if (replying) body['messageReference'] = { messageId: replying.id };
      setText('');
      const m = await post<Message>(props.log.base, body);
      props.log.merge([m]); // the gateway's copy merges into the same id
      tray.clear();
      cancelReply(props.log.channelId);
    } catch (x) {
      setText(content); // nothing lost: the text, the tray and the reply stay
      setError(describe(x)); // quota, size and type errors, said plainly
    } finally {
      setBusy(null);
    }
  };

  const addFiles = (files: File[]) => {
    setError(null);
    const left = tray.add(files);
    if (left > 0) setError(`A message holds at most ${MAX_ATTACHMENTS} files.`);
    input.current?.focus();
  };

  /** Up-arrow in an empty composer: my newest message here opens for editing. */
  const editLast = (): boolean => {
    const mine = props.log.items.value.findLast(
      (m) => m.author.id === me.value?.id && m.content !== '',
    );
    if (!mine) return false;
    editingId.value = mine.id;
    document.querySelector(`.msg[data-id="${mine.id}"]`)?.scrollIntoView({ block: 'nearest' });
    return true;
  };

  if (props.uploadRef) props.uploadRef.current = addFiles;

  if (props.disabled)
    return (
      <div class="composer disabled">
        <p class="muted">{props.disabled}</p>
      </div>
    );

  return (
    <div class="composer">
      {error && (
        <p class="composer-error" role="alert">
          {error}
        </p>
      )}
      {busy && (
        <p class="muted small" role="status">
          {busy}
        </p>
      )}
      <CommandPicker log={props.log} text={text} setText={setText} keys={commandKeys} />
      {replying && (
        <ReplyBar
          m={replying}
          name={props.names?.user(replying.author.id) ?? replying.author.name}
          {...(props.names ? { names: props.names } : {})}
        />
      )}
      <AttachmentTray
        files={tray.files}
        onRemove={(k) => tray.remove(k)}
        disabled={busy !== null}
      />
      {ac.view}
      <div class={`composer-box${over > 0 ? ' over' : ''}`}>
        <button
          type="button"
          class="icon-btn"
          aria-label="Attach a file"
          title="Attach a file (jpg, png, gif, mp3, wav, mp4; 5 MiB)"
          onClick={() => picker.current?.click()}
        >
          <Icon name="clip" />
        </button>
        <input
          ref={picker}
          type="file"
          accept={ACCEPT}
          multiple
          hidden
          aria-label="Choose files to upload"
          onChange={(e) => {
            const files = [...(e.currentTarget.files ?? [])];
            e.currentTarget.value = '';
            if (files.length) addFiles(files);
          }}
        />
        <textarea
          ref={input}
          rows={1}
          aria-label={props.placeholder}
          placeholder={props.placeholder}
          value={text}
          aria-invalid={over > 0}
          aria-describedby={over > 0 ? 'composer-count' : undefined}
          aria-autocomplete="list"
          aria-expanded={ac.expanded}
          aria-controls={ac.expanded ? 'mention-list' : undefined}
          aria-activedescendant={ac.activeId}
          onInput={(e) => {
            setText(e.currentTarget.value);
            ac.refresh();
            props.onTyping?.();
          }}
          onClick={ac.refresh}
          onBlur={ac.close}
          onKeyDown={(e) => {
            if (e.isComposing) return;
            if (commandKeys.current?.onKey(e)) return;
            if (ac.onKeyDown(e)) return;
            if (e.key === 'ArrowUp' && text === '' && tray.files.length === 0) {
              if (editLast()) e.preventDefault();
              return;
            }
            if (e.key === 'Escape' && replying) {
              e.preventDefault();
              cancelReply(props.log.channelId);
              return;
            }
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              void send();
            }
          }}
          onPaste={(e) => {
            const files = [...(e.clipboardData?.files ?? [])];
            if (files.length) {
              e.preventDefault();
              addFiles(files);
            }
          }}
        />
        <button
          type="button"
          class="icon-btn send"
          aria-label="Send message"
          disabled={over > 0 || (text.trim() === '' && tray.files.length === 0) || busy !== null}
          onClick={() => void send()}
        >
          <Icon name="send" />
        </button>
      </div>
      {length > MAX_CONTENT_CODEPOINTS - 200 && (
        <p id="composer-count" class={`count small${over > 0 ? ' over' : ''}`} aria-live="polite">
          {over > 0
            ? `${over} characters too long (${length}/${MAX_CONTENT_CODEPOINTS}) — shorten it to send`
            : `${length}/${MAX_CONTENT_CODEPOINTS}`}
        </p>
      )}
    </div>
  );
}
