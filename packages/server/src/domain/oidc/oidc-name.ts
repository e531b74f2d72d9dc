import { PersonName } from '@parley/protocol';
import { AppError } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';
import { requireFreeName } from '../users/person-name.js';

/** D46/D70: what a person's name must match (the same pattern the API validates with). */
const PERSON_NAME = new RegExp((PersonName as { pattern?: string }).pattern ?? '', 'u');
/** D70: characters a name may not hold (control, format, invisible, …): dropped from claims. */
const NOT_NAME_CHAR = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/gu;
const MAX = 32;

const codePoints = (s: string): string[] => [...s];
const clip = (s: string, n: number): string => codePoints(s).slice(0, n).join('').trim();

/**
 * D69: the name a new person gets from the provider's claims — `preferred_username`, else
 * `nickname`, `name`, or the part of `email` before the @ — cleaned to pass D46/D70's rules:
 * invisible and control characters dropped, whitespace runs made one space, trimmed, at most 32
 * code points; shorter than 2 → "member".
 */
export function nameFromClaims(claims: Record<string, unknown>): string {
  const email = typeof claims['email'] === 'string' ? claims['email'].split('@')[0] : undefined;
  const raw = [claims['preferred_username'], claims['nickname'], claims['name'], email].find(
    (v): v is string => typeof v === 'string' && v.trim() !== '',
  );
  const cleaned = clip(
    (raw ?? '').normalize('NFC').replace(NOT_NAME_CHAR, '').replace(/\s+/gu, ' ').trim(),
    MAX,
  );
  return codePoints(cleaned).length >= 2 && PERSON_NAME.test(cleaned) ? cleaned : 'member';
}

/** `base` with `-n` at its end, clipped so the whole fits in 32 code points. */
export function withSuffix(base: string, n: number): string {
  const suffix = `-${n}`;
  return clip(base, MAX - suffix.length) + suffix;
}

/**
 * D69: `base`, or the first of `base-2`, `base-3`, … that no person has and that is not
 * confusable with another person's name (D46/D70: the same check as registering). The insert
 * checks again (unique indexes), so a race costs the loser a retry, never a duplicate.
 */
export async function uniqueName(db: Db, base: string, skip = 0): Promise<string> {
  for (let n = 1 + skip; n < 100 + skip; n++) {
    const candidate = n === 1 ? base : withSuffix(base, n);
    if (!PERSON_NAME.test(candidate)) continue;
    try {
      await requireFreeName(db, candidate);
      return candidate;
    } catch (err) {
      if (err instanceof AppError && err.code === 'CONFLICT') continue;
      throw err;
    }
  }
  // A crowded name: a random number settles it.
  return withSuffix(base, 100 + Math.floor(Math.random() * 900_000));
}
