/**
 * D22: the client's file name becomes part of a URL and a Content-Disposition header, never a
 * path (storage keys are random). So it is cut down to a safe shape: no directories, no control
 * or invisible formatting characters (NUL, bidi overrides that disguise extensions), only
 * letters, marks, digits and `._-`, a bounded length, and a lower-case extension.
 */
export const MAX_STEM_CHARS = 100;
const MAX_EXT_CHARS = 10;

export interface SafeName {
  /** the whole sanitized name, e.g. `cat.png` */
  readonly name: string;
  /** lower-case extension without the dot; "" when there is none */
  readonly ext: string;
}

const take = (s: string, n: number): string => Array.from(s).slice(0, n).join('');

export function sanitizeFilename(raw: string): SafeName {
  // Keep only the last path segment, whichever separator the client's platform uses.
  const base = raw.normalize('NFC').split(/[/\\]/).pop() ?? '';
  const cleaned = base
    // Control (Cc), format (Cf: bidi overrides, zero-width), private-use, unassigned, lone
    // surrogates and line/paragraph separators: dropped outright.
    .replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}]/gu, '')
    // Everything else outside the safe set (spaces, quotes, %, ;, …) becomes `_`.
    .replace(/[^\p{L}\p{M}\p{N}._-]/gu, '_')
    .replace(/_{2,}/g, '_')
    .replace(/\.{2,}/g, '.');
  const dot = cleaned.lastIndexOf('.');
  const rawStem = dot >= 0 ? cleaned.slice(0, dot) : cleaned;
  const rawExt = dot >= 0 ? cleaned.slice(dot + 1) : '';
  // No leading dots or dashes: no hidden files, no "..", nothing that reads as an option.
  const stem = take(rawStem.replace(/^[._-]+/, '').replace(/[._]+$/, ''), MAX_STEM_CHARS) || 'file';
  const ext = take(rawExt.replace(/[^\p{L}\p{N}]/gu, ''), MAX_EXT_CHARS).toLowerCase();
  return { name: ext ? `${stem}.${ext}` : stem, ext };
}
