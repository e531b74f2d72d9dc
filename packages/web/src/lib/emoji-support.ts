/**
 * Which emoji this device can draw. The picker's data set (`unicode-emoji-json`) follows the
 * newest Unicode emoji release, but a device's emoji font lags behind it (Debian 12's Noto Color
 * Emoji stops at Emoji 15; older phones earlier): an emoji the font lacks is drawn as an empty box
 * ("tofu"), or a ZWJ sequence as its parts side by side. The picker offers only what the device
 * draws, found by drawing one emoji of each release on a canvas, newest first, as
 * emoji-picker-element does: a colour font's glyph keeps its colours whatever the fill, the
 * fallback box takes the fill's; a sequence the font joins is one glyph wide.
 */

/** One emoji of each release, from the data set (the first that is one code point if any). */
export function representatives(
  emojis: readonly { emoji: string; emoji_version: string }[],
): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of emojis) {
    const single = [...e.emoji.replace(/\uFE0F/g, '')].length === 1;
    const had = out.get(e.emoji_version);
    if (had === undefined || (single && [...had.replace(/\uFE0F/g, '')].length > 1))
      out.set(e.emoji_version, e.emoji);
  }
  return out;
}

const SIZE = 24;

/**
 * Whether the device draws `emoji` as one colour glyph; undefined when it cannot tell. A colour
 * font's glyph keeps its own colours whatever the fill (🖤 is black in both draws below); a
 * fallback box is drawn in the fill, so a black draw and a blue one differ.
 */
export function drawsInColour(emoji: string): boolean | undefined {
  const canvas = document.createElement('canvas');
  canvas.width = SIZE * 4;
  canvas.height = SIZE * 2;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  if (!ctx) return undefined;
  ctx.font = `${SIZE}px sans-serif`;
  ctx.textBaseline = 'top';
  // a sequence the font does not join is drawn as its parts: twice a glyph's width or more
  const one = ctx.measureText('\u{1F600}').width;
  if (ctx.measureText(emoji).width > one * 1.5) return false;
  ctx.fillStyle = '#000';
  ctx.fillText(emoji, 0, 0);
  ctx.fillStyle = '#00f';
  ctx.fillText(emoji, SIZE * 2, 0);
  const a = ctx.getImageData(0, 0, SIZE * 2, SIZE * 2).data;
  const b = ctx.getImageData(SIZE * 2, 0, SIZE * 2, SIZE * 2).data;
  let ink = false;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return false;
    if (i % 4 === 3 && (a[i] ?? 0) > 0) ink = true;
  }
  return ink;
}

let newest: number | null | undefined;

/**
 * The newest emoji release the device draws (null: it cannot tell, so offer everything).
 * Measured once per page.
 */
export function newestDrawn(
  emojis: readonly { emoji: string; emoji_version: string }[],
): number | null {
  if (newest !== undefined) return newest;
  const byVersion = [...representatives(emojis)].sort((a, b) => Number(b[0]) - Number(a[0]));
  newest = null;
  for (const [version, emoji] of byVersion) {
    const drawn = drawsInColour(emoji);
    if (drawn === undefined) break;
    if (drawn) {
      newest = Number(version);
      break;
    }
  }
  return newest;
}
