import unhomoglyph from 'unhomoglyph';

/**
 * D46: a person's name is their login, unique ignoring case. The key is the name in Unicode
 * normal form C, lower-cased with Unicode's rules (SQL's lower() only folds ASCII on SQLite,
 * so the key is computed here and stored).
 */
export function nameKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * UTS #39 skeleton: NFD, default-ignorable characters removed, every character replaced by its
 * prototype from Unicode's confusables table (the `unhomoglyph` package: Cyrillic а → a, m → rn,
 * 0 → O, 1 → l, …), NFD again.
 */
function skeleton(s: string): string {
  return unhomoglyph(s.normalize('NFD').replace(IGNORABLE, '')).normalize('NFD');
}

/**
 * D70: the key under which two people's names are confusable (unique among people, stored beside
 * the name key). The skeleton is taken of the name in NFKC (full-width ａｄｍｉｎ is admin, Ⅿ is M),
 * then lower-cased — names are case-insensitive logins — and taken again (Cyrillic АDMIN and
 * Greek Ηello skeleton to capitals first, so they meet admin and hello). `i` counts as `l`: the
 * prototype of a capital I is l, and a person may show their name with either case ("Ian" and
 * "lan").
 */
export function confusableKey(name: string): string {
  const once = skeleton(name.normalize('NFKC'));
  return skeleton(once.toLowerCase()).replaceAll('i', 'l');
}
