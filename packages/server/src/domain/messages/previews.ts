import type { RecordedEvent } from './../events/recorder.js';
import type { MessageRow } from '../views.js';

/** D71: a sent message whose links may get previews (filled in by http/link-previews). */
export interface PreviewScheduler {
  schedule(m: MessageRow & { scope: RecordedEvent['scope'] }): void;
  /** resolves when no preview is queued or being fetched */
  idle(): Promise<void>;
}
