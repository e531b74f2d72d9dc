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
 * D46: a person's name, which is also their login: 2–32 code points of safe text, with no
 * leading or trailing whitespace (clients trim; the server refuses untrimmed names with 400).
 */
export const PersonName = Type.String({
  minLength: 2,
  maxLength: 32,
  pattern: '^(?!\\s)(?!.*\\s$)[^\\p{Cc}\\p{Cf}\\p{Cs}\\p{Zl}\\p{Zp}]*$',
  description: 'D46: 2–32 code points, no control, format or bidi characters, trimmed',
});

/** D54: names of guilds, channels, roles and bots: 1–100 code points of safe text. */
export const LabelName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: SAFE_TEXT_PATTERN,
  description: '1–100 code points, no control, format or bidi characters (D54)',
});

/** D48/D54: an avatar is an http(s) URL (never javascript:, data: …). */
export const AvatarUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  format: 'uri',
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  description: 'an https:// or http:// URL (D48, D54)',
});
