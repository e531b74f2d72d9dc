import { Type } from 'typebox';

/**
 * D46/D54: names that people read. No control (Cc), format (Cf — this includes the bidi
 * overrides and isolates, zero-width joiners and the BOM), surrogate (Cs), line or paragraph
 * separator characters. Patterns are compiled with the `u` flag (ajv's default), so `\p{…}`
 * classes work and lengths count code points.
 */
export const SAFE_TEXT_PATTERN = '^[^\\p{Cc}\\p{Cf}\\p{Cs}\\p{Zl}\\p{Zp}]*$';

/** True when `s` has none of the characters SAFE_TEXT_PATTERN refuses. */
export function isSafeText(s: string): boolean {
  return new RegExp(SAFE_TEXT_PATTERN, 'u').test(s);
}

/**
 * D70: a character of a name. Beside SAFE_TEXT_PATTERN's classes, every Default_Ignorable_Code_Point
 * (invisible by definition: the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the combining
 * grapheme joiner U+034F, variation selectors, the Mongolian free variation selectors
 * U+180B–U+180F, the Khmer inherent vowels U+17B4/U+17B5, …) and U+2800 BRAILLE PATTERN BLANK,
 * which renders as nothing but no Unicode property says so (it is a symbol, So).
 */
const NAME_CHAR = '[^\\p{Cc}\\p{Cf}\\p{Cs}\\p{Zl}\\p{Zp}\\p{Default_Ignorable_Code_Point}\\u2800]';

/** D70: names that people read (guilds, channels, roles, bots): no invisible character. */
export const NAME_TEXT_PATTERN = `^${NAME_CHAR}*$`;

/** True when `s` has none of the characters NAME_TEXT_PATTERN refuses. */
export function isNameText(s: string): boolean {
  return new RegExp(NAME_TEXT_PATTERN, 'u').test(s);
}

/**
 * D46/D70: a person's name, which is also their login: 2–32 code points, no control, format,
 * bidi or invisible characters, with no leading or trailing whitespace (clients trim; the server
 * refuses untrimmed names with 400). A name confusable with another person's is refused by the
 * server (409, a UTS #39 skeleton).
 */
export const PersonName = Type.String({
  minLength: 2,
  maxLength: 32,
  pattern: `^(?!\\s)(?!.*\\s$)${NAME_CHAR}*$`,
  description:
    "D46/D70: 2–32 code points, no control, format, bidi or invisible characters, trimmed; not confusable with another person's",
});

/** D54/D70: names of guilds, channels, roles and bots: 1–100 code points, none invisible. */
export const LabelName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: NAME_TEXT_PATTERN,
  description: '1–100 code points, no control, format, bidi or invisible characters (D54, D70)',
});

/**
 * D70: a bot's description, whichever API sets it (/app/v1 or /admin/v1): one validator, no
 * control, format or bidi characters (U+202E would reverse what follows it).
 */
export const BotDescription = Type.String({
  maxLength: 1000,
  pattern: SAFE_TEXT_PATTERN,
  description: 'up to 1000 characters, no control, format or bidi characters (D54, D70)',
});

/** D48/D54: an avatar is an http(s) URL (never javascript:, data: …). */
export const AvatarUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  format: 'uri',
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  description: 'an https:// or http:// URL (D48, D54)',
});
