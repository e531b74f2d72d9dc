import emojiRegex from 'emoji-regex';

/**
 * D63: a reaction is one Unicode emoji, checked against emoji-regex — a pattern generated from
 * the Unicode emoji data (emoji-test.txt, RGI sequences), never written by hand here. The
 * variation selector VS16 (U+FE0F) is normalised, so `❤` and `❤️` are one reaction: the stored
 * form is the fully-qualified one (VS16 after each component that is not shown as an emoji by
 * default, as the Unicode properties of the engine say), or the bare form when that is what the
 * data lists.
 */
const source = emojiRegex();
const ONE_EMOJI = new RegExp(`^(?:${source.source})$`, source.flags.replace('g', ''));
const VS16 = '\uFE0F';
const KEYCAP = '\u20E3';
const EMOJI = /^\p{Emoji}$/u;
const PRESENTATION = /^\p{Emoji_Presentation}$/u;
const MODIFIER = /^\p{Emoji_Modifier}$/u;
const COMPONENT = /^\p{Emoji_Component}$/u;

/** The longest emoji sequences are a few code points (families, flags of subdivisions). */
const MAX_CODE_POINTS = 16;

export function normalizeEmoji(input: string): string | undefined {
  const bare = [...input.replaceAll(VS16, '')];
  if (bare.length === 0 || bare.length > MAX_CODE_POINTS) return undefined;
  let qualified = '';
  for (let i = 0; i < bare.length; i++) {
    const c = bare[i] ?? '';
    const next = bare[i + 1] ?? '';
    qualified += c;
    const textDefault = EMOJI.test(c) && !PRESENTATION.test(c) && !COMPONENT.test(c);
    if ((textDefault && !MODIFIER.test(next)) || next === KEYCAP) qualified += VS16;
  }
  for (const candidate of [qualified, bare.join('')])
    if (ONE_EMOJI.test(candidate)) return candidate;
  return undefined;
}
