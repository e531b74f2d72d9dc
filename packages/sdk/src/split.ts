import type { MAX_CONTENT_CODEPOINTS } from '@parley/protocol';

/** D14: a message holds at most 2,000 Unicode code points (the type ties it to the protocol). */
export const MAX_CONTENT: typeof MAX_CONTENT_CODEPOINTS = 2000;

/**
 * Split `content` into parts of at most `max` code points (D14: the caller splits; this is the
 * SDK doing it for you). Each cut is made at the last line break inside the limit, else at the
 * last whitespace, else (one word longer than the limit) between code points. The break itself
 * is kept at the end of the part it ends, so joining the parts gives back the content exactly;
 * a part that would be only whitespace is merged into its neighbour, as the server refuses
 * nothing but empty content. Never cuts a surrogate pair.
 */
export function splitContent(content: string, max: number = MAX_CONTENT): string[] {
  if (!Number.isInteger(max) || max < 1) throw new RangeError('max must be a positive integer');
  const cps = Array.from(content);
  if (cps.length <= max) return [content];
  const parts: string[] = [];
  let start = 0;
  while (cps.length - start > max) {
    const end = start + max; // exclusive
    let cut = -1;
    for (let i = end - 1; i > start; i--)
      if (cps[i] === '\n') {
        cut = i + 1;
        break;
      }
    if (cut < 0)
      for (let i = end - 1; i > start; i--)
        if (/\s/u.test(cps[i] ?? '')) {
          cut = i + 1;
          break;
        }
    if (cut < 0) cut = end;
    parts.push(cps.slice(start, cut).join(''));
    start = cut;
  }
  parts.push(cps.slice(start).join(''));
  return parts;
}
