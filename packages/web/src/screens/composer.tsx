import { MAX_CONTENT_CODEPOINTS } from '@parley/protocol';
import { useRef, useState } from 'preact/hooks';
import { describe, post, upload } from '../lib/api.js';
import type { Message } from '../lib/types.js';
import type { ChannelLog } from '../state/store.js';
import { Icon } from '../ui/icons.js';
import { CommandPicker, type PickerKeys } from './command-picker.js';

const ACCEPT =
  '.jpg,.jpeg,.png,.gif,.mp3,.wav,.mp4,image/jpeg,image/png,image/gif,audio/mpeg,audio/wav,video/mp4';

/** D15: the message type of an uploaded file, from its name. */
function msgTypeOf(name: string): 1 | 2 | 3 {
  const ext = name.split('.').pop()?.toLowerCase() ?? '';
  if (['mp3', 'wav'].includes(ext)) return 2;
  if (ext === 'mp4') return 3;
  return 1;
}

/**
 * Enter sends, Shift+Enter is a newline; the D14 limit (2000 code points) is counted as one
 * types and sending is refused before the server has to. Files come by the picker, by drop on
 * the channel (see ChannelView) or by paste.
 */
export function Composer(props: {
  log: ChannelLog;
  placeholder: string;
  disabled?: string | undefined;
  onTyping?: (() => void) | undefined;
  uploadRef?: { current: ((files: File[]) => void) | null };
}) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const input = useRef<HTMLTextAreaElement>(null);
  const picker = useRef<HTMLInputElement>(null);
  const commandKeys = useRef<PickerKeys | null>(null); // D64: `/` opens the command picker
  const length = [...text].length; // D14 counts code points
  const over = length - MAX_CONTENT_CODEPOINTS;

  const sendContent = async (content: string, msgType?: 1 | 2 | 3) => {
    const m = await post<Message>(props.log.base, msgType ? { content, msgType } : { content });
    props.log.merge([m]); // the gateway's copy merges into the same id
  };

  const send = async () => {
    if (text.trim() === '' || over > 0 || busy) return;
    const content = text;
    setError(null);
    setText('');
    try {
      await sendContent(content);
    } catch (x) {
      setText(content); // nothing lost
      setError(describe(x));
    }
  };

  const uploadFiles = async (files: File[]) => {
    setError(null);
    for (const f of files) {
      setBusy(`Uploading ${f.name || 'file'}…`);
      try {
        const up = await upload(f);
        await sendContent(up.url, msgTypeOf(up.filename));
      } catch (x) {
        setError(describe(x)); // quota, size and type errors, said plainly
        break;
      } finally {
        setBusy(null);
      }
    }
    input.current?.focus();
  };
  if (props.uploadRef) props.uploadRef.current = (f) => void uploadFiles(f);

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
            if (files.length) void uploadFiles(files);
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
          onInput={(e) => {
            setText(e.currentTarget.value);
            props.onTyping?.();
          }}
          onKeyDown={(e) => {
            if (commandKeys.current?.onKey(e)) return;
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void send();
            }
          }}
          onPaste={(e) => {
            const files = [...(e.clipboardData?.files ?? [])];
            if (files.length) {
              e.preventDefault();
              void uploadFiles(files);
            }
          }}
        />
        <button
          type="button"
          class="icon-btn send"
          aria-label="Send message"
          disabled={over > 0 || text.trim() === ''}
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
