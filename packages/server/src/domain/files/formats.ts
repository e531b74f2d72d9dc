import { loadFileType } from '../../lazy-modules.js';

/** D15 kinds of file a message can carry. */
export const FileKind = { IMAGE: 1, AUDIO: 2, VIDEO: 3 } as const;
export type FileKind = (typeof FileKind)[keyof typeof FileKind];

export interface FileFormat {
  /** file-type's name for it */
  readonly type: string;
  readonly mime: string;
  readonly kind: FileKind;
  /** extensions a file name of this format may carry (D22: they must agree with the content) */
  readonly extensions: readonly string[];
}

/** D22: the only formats accepted, recognised by their content (magic bytes), never by name. */
const FORMATS: readonly FileFormat[] = [
  { type: 'jpg', mime: 'image/jpeg', kind: FileKind.IMAGE, extensions: ['jpg', 'jpeg'] },
  { type: 'png', mime: 'image/png', kind: FileKind.IMAGE, extensions: ['png'] },
  { type: 'gif', mime: 'image/gif', kind: FileKind.IMAGE, extensions: ['gif'] },
  { type: 'mp3', mime: 'audio/mpeg', kind: FileKind.AUDIO, extensions: ['mp3'] },
  { type: 'wav', mime: 'audio/wav', kind: FileKind.AUDIO, extensions: ['wav'] },
  { type: 'mp4', mime: 'video/mp4', kind: FileKind.VIDEO, extensions: ['mp4'] },
];

/** How many leading bytes the sniffer looks at (file-type needs at most a few KiB for ours). */
export const SNIFF_BYTES = 64 * 1024;

/** The format of a file from its first bytes, or undefined when it is not one we accept. */
export async function sniffFormat(head: Uint8Array): Promise<FileFormat | undefined> {
  if (head.length === 0) return undefined;
  const found = await (await loadFileType()).fileTypeFromBuffer(head);
  return found ? FORMATS.find((f) => f.type === found.ext) : undefined;
}

export const ACCEPTED = FORMATS.map((f) => f.type).join(', ');
