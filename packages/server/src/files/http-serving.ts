/**
 * Pure helpers for serving stored files over HTTP (D23): byte ranges (RFC 9110 §14) and a safe
 * Content-Disposition (RFC 6266 with an RFC 8187/5987 `filename*`).
 */

export type RangeAnswer =
  { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

const FULL: RangeAnswer = { kind: 'full' };

/**
 * What to answer a `Range` header with for a body of `size` bytes. A header we do not
 * understand, an invalid one, another unit, or several ranges at once is answered with the whole
 * body (200): RFC 9110 lets a server ignore Range, and one body serves every player and
 * downloader; multipart/byteranges would add code for no client we know. A single range that
 * lies wholly past the end is 416.
 */
export function parseRange(header: string | undefined, size: number): RangeAnswer {
  if (header === undefined) return FULL;
  const m = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header.trim());
  if (!m) return FULL;
  const [, first = '', last = ''] = m;
  if (first === '' && last === '') return FULL;
  if (first === '') {
    // Suffix range: the last N bytes.
    const n = Number(last);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return FULL; // invalid range-spec: ignore the header
  if (start >= size) return { kind: 'unsatisfiable' };
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  return { kind: 'partial', start, end };
}

/** RFC 8187 attr-char: everything else is percent-encoded. */
const encode5987 = (s: string): string =>
  encodeURIComponent(s).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * `inline` (D23: media plays in place) with a plain-ASCII `filename` for old clients — no
 * quotes, backslashes or non-ASCII that could break out of the quoted string — and the exact
 * UTF-8 name in `filename*`.
 */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `inline; filename="${ascii}"; filename*=UTF-8''${encode5987(name)}`;
}
